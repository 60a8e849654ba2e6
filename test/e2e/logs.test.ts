import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { LOG_FIELD_NAMES } from '../../src/observability/log-fields.js';
import { packageInfo } from '../../src/util/package-info.js';
import { api, HOOKD_BIN, type HookdProcess, spawnHookd, tempDir } from '../helpers/hookd.js';
import { type Receiver, startReceiver, startUpstream, type Upstream } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { assertBuilt, cleanEnv, runProcess } from '../hookctl/helpers.js';

// hookd's log: a spawned daemon's stdout after every endpoint was driven with real
// tokens. Nothing secret may reach it, and every line is a JSON record that journald and log
// shippers can index.

interface LogRecord {
  level?: unknown;
  time?: unknown;
  msg?: unknown;
  reqId?: unknown;
  method?: unknown;
  url?: unknown;
  status?: unknown;
  [key: string]: unknown;
}

let upstream: Upstream;
let receiver: Receiver;
let failing: Receiver;
let d: HookdProcess;
let exitCode: number | null;
let configDir = '';
const secrets: Record<string, string> = {};
/** A token that a careless client puts in a query string. */
let carol = '';
/** Every API request made: method, path as sent, expected status. */
const made: [string, string, number][] = [];

async function hookdCli(args: string[], dataDir: string): Promise<string> {
  const r = await runProcess(process.execPath, [HOOKD_BIN, ...args, '--data-dir', dataDir], {
    env: cleanEnv(),
  });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
}

/** An API call that is also recorded in `made`, to be found in the log afterwards. */
async function call<T = unknown>(
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  status?: number,
): Promise<T> {
  const r = await api<T>(d.url, token, method, path, body);
  if (status !== undefined) assert.equal(r.status, status, `${method} ${path}: ${r.text}`);
  made.push([method, path, r.status]);
  return r.body;
}

function records(): LogRecord[] {
  return d.lines.map((l) => JSON.parse(l) as LogRecord);
}

before(async () => {
  assertBuilt();
  upstream = await startUpstream();
  receiver = await startReceiver();
  failing = await startReceiver({ status: 500 });
  configDir = tempDir('hookd-logs-');
  const config = join(configDir, 'hookd.json');
  writeFileSync(config, JSON.stringify({ logLevel: 'info' }));
  d = await spawnHookd(['--upstream', upstream.url, '--config', config]);
  secrets.admin = d.token;

  // A second user, made the way an operator does, beside the running daemon.
  await hookdCli(['user', 'add', 'bob', '--scope', '/'], d.dataDir);
  secrets.bob = await hookdCli(['token', 'create', 'bob'], d.dataDir);
  await hookdCli(['user', 'add', 'carol', '--scope', '/'], d.dataDir);
  carol = await hookdCli(['token', 'create', 'carol'], d.dataDir);
  secrets.wrong = 'hkd_0123456789ab_NotARealTokenButShapedLikeOneXXXXXXXXXXXXXX';
  secrets.callbackCredential = 'cb-credential-7f3a9e';
  secrets.upstreamCredential = 'upstream-credential-51c2';
  secrets.cookie = 'session-cookie-a81b';

  const hookBody = {
    PathPattern: '/repositories/*/timeseries/(*)',
    Methods: ['GET'],
    Callback: `${receiver.url}/cb`,
    Headers: { Authorization: `Bearer ${secrets.callbackCredential}` },
  };
  const hook = await call<{ Id: string }>(d.token, 'POST', '/hooks', hookBody, 201);
  await call(d.token, 'GET', `/hooks/${hook.Id}`, undefined, 200);
  await call(d.token, 'GET', '/hooks', undefined, 200);
  await call(d.token, 'GET', '/hooks?limit=1', undefined, 200);
  await call(d.token, 'PUT', `/hooks/${hook.Id}`, hookBody, 200);
  await call(d.token, 'GET', '/hooktypes', undefined, 200);
  await call(
    d.token,
    'POST',
    '/_hookd/match',
    { Method: 'GET', Path: '/repositories/r1/timeseries/ts1', StatusCode: 200 },
    200,
  );
  const failingHook = await call<{ Id: string }>(
    secrets.bob,
    'POST',
    '/hooks',
    { PathPattern: '/failing', Methods: ['POST'], Callback: `${failing.url}/cb` },
    201,
  );

  // The live tail, with the token where it belongs, and once (refused) where it does not.
  const ws = new WebSocket(`${d.url.replace(/^http/, 'ws')}/_hookd/tail`, {
    headers: { authorization: `Bearer ${d.token}` },
  });
  const tailed: string[] = [];
  ws.on('message', (m) => tailed.push(m.toString()));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  await new Promise<void>((resolve) => {
    const refused = new WebSocket(`${d.url.replace(/^http/, 'ws')}/tail?token=${d.token}`);
    refused.on('unexpected-response', () => resolve());
    refused.on('error', () => resolve());
  });

  // Triggers: the proxy (carrying credentials meant for the upstream) and the report endpoint.
  const proxied = await fetch(`${d.url}/repositories/r1/timeseries/ts1?x=1`, {
    headers: { authorization: `Bearer ${secrets.upstreamCredential}`, cookie: `sid=${secrets.cookie}` },
  });
  assert.equal(proxied.status, 200);
  await proxied.text();
  await call(
    d.token,
    'POST',
    '/_hookd/report',
    { Method: 'GET', Path: '/repositories/r2/timeseries/ts2', StatusCode: 200 },
    202,
  );
  await call(
    secrets.bob,
    'POST',
    '/_hookd/report',
    { Method: 'POST', Path: '/failing/1', StatusCode: 200 },
    202,
  );
  await receiver.waitFor(2);
  await failing.waitFor(1);
  await until(
    'two attempts tailed',
    () => tailed.filter((t) => t.includes('"attempt"')).length >= 2,
    5000,
  ).catch(() => undefined);
  ws.close();

  // The delivery log, redelivery and the signing secret.
  const list = await call<{ Id: string }[]>(d.token, 'GET', `/hooks/${hook.Id}/deliveries`, undefined, 200);
  const deliveryId = list[0]!.Id;
  await call(d.token, 'GET', `/_hookd/deliveries/${deliveryId}`, undefined, 200);
  await call(d.token, 'POST', `/_hookd/deliveries/${deliveryId}/redeliver`, undefined, 202);
  await call(d.token, 'POST', `/hooks/${hook.Id}/redeliver`, { status: 'succeeded' }, 202);
  secrets.secret = (
    await call<{ Secret: string }>(d.token, 'GET', `/hooks/${hook.Id}/secret`, undefined, 200)
  ).Secret;
  secrets.rotated = (
    await call<{ Secret: string }>(d.token, 'POST', `/hooks/${hook.Id}/secret/rotate`, undefined, 200)
  ).Secret;
  await call(secrets.bob, 'GET', `/hooks/${failingHook.Id}/secret`, undefined, 200);
  // 2 firings, 1 redelivery, and the bulk one of the other delivery (the first is still queued).
  await receiver.waitFor(4);

  // Operations, refusals, and the end of a hook.
  await call(d.token, 'POST', '/_hookd/reload', undefined, 200);
  for (const path of ['/metrics', '/healthz', '/readyz'])
    assert.equal((await api(d.opsUrl, undefined, 'GET', path)).status, 200, path);
  await call(undefined, 'GET', '/_hookd/openapi.json', undefined, 200);
  await call(secrets.wrong, 'GET', '/hooks', undefined, 401);
  await call(secrets.bob, 'GET', `/hooks/${hook.Id}`, undefined, 404);
  await call(secrets.bob, 'POST', '/_hookd/reload', undefined, 403);
  await call(d.token, 'POST', '/hooks', '{"PathPattern": ', 400);
  await call(d.token, 'DELETE', `/hooks/${hook.Id}`, undefined, 204);
  // Misplaced by the client: the token goes in the query string (401: it is not a credential there).
  await call(undefined, 'GET', `/hooks?access_token=${carol}`, undefined, 401);

  exitCode = await d.stop();
});

after(async () => {
  if (d && d.proc.exitCode === null) await d.kill();
  await receiver?.close();
  await failing?.close();
  await upstream?.close();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

describe("hookd's log", () => {
  it('hookd stopped cleanly and wrote nothing to stderr', () => {
    assert.equal(exitCode, 0);
    assert.equal(d.stderr(), '');
    assert.ok(d.lines.length > made.length, `only ${d.lines.length} log lines`);
  });

  it('every line is a JSON object with level, time and msg', () => {
    for (const line of d.lines) {
      let rec: LogRecord;
      try {
        rec = JSON.parse(line) as LogRecord;
      } catch {
        assert.fail(`not JSON: ${line}`);
      }
      assert.ok(rec !== null && typeof rec === 'object' && !Array.isArray(rec), line);
      assert.ok(['trace', 'debug', 'info', 'warn', 'error', 'fatal'].includes(rec.level as string), line);
      assert.equal(typeof rec.time, 'string', line);
      assert.ok(!Number.isNaN(Date.parse(rec.time as string)), line);
      assert.match(rec.time as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, line);
      assert.equal(typeof rec.msg, 'string', line);
      assert.notEqual(rec.msg, '', line);
    }
  });

  it('no line holds a token, a signing secret, a credential header value or a cookie', () => {
    const text = d.lines.join('\n');
    for (const [name, value] of Object.entries(secrets)) {
      assert.ok(value.length >= 12, `${name} is set`);
      assert.ok(!text.includes(value), `the log holds ${name}`);
      // The part after a prefix is the secret part of a token (hkd_…_X) or of a whsec_ key.
      const tail = value.replace(/^(whsec_|hkd_[0-9a-f]+_)/, '');
      assert.ok(!text.includes(tail), `the log holds the secret part of ${name}`);
    }
    assert.doesNotMatch(text, /whsec_/);
    assert.doesNotMatch(text, /Bearer /i);
    assert.doesNotMatch(text, /"authorization":"(?!\[redacted\])/i);
  });

  it('each API request has a line with reqId, method, path and status', () => {
    const lines = records().filter((r) => r.msg === 'api request');
    for (const r of lines) {
      assert.match(String(r.reqId), /\S/, JSON.stringify(r));
      assert.equal(typeof r.method, 'string');
      assert.equal(typeof r.path, 'string');
      assert.equal(typeof r.status, 'number');
      assert.equal(typeof r.durationMs, 'number');
    }
    const ids = lines.map((r) => r.reqId);
    assert.equal(new Set(ids).size, ids.length, 'request ids are unique');
    // The line names the path without its query string (a client may put a token there).
    for (const [method, url, status] of made.filter(([, p]) => !p.includes('access_token'))) {
      const path = url.split('?')[0];
      assert.ok(
        lines.some((r) => r.method === method && r.path === path && r.status === status),
        `no "api request" line for ${method} ${path} ${status}`,
      );
    }
  });

  it('lines written while handling a request carry its reqId', () => {
    const created = records().find((r) => r.msg === 'hook created');
    assert.ok(created, 'a "hook created" line');
    const same = records().filter((r) => r.reqId === created.reqId);
    assert.ok(same.some((r) => r.msg === 'api request' && r.method === 'POST' && r.path === '/hooks'));
  });

  it('a delivery attempt produces a "delivery attempt" line, a failed one with its outcome', () => {
    const attempts = records().filter((r) => r.msg === 'delivery attempt');
    const ok = attempts.find((r) => r.outcome === 'succeeded');
    assert.ok(ok, 'a succeeded attempt');
    assert.match(String(ok.hookId), /^hk_/);
    assert.match(String(ok.deliveryId), /^msg_/);
    assert.equal(ok.status, 200);
    assert.equal(typeof ok.attempt, 'number');
    const retrying = attempts.find((r) => r.outcome === 'retrying');
    assert.ok(retrying, 'a retrying attempt');
    assert.equal(retrying.status, 500);
  });

  it('a token that a client put in the query string is not logged either', () => {
    const text = d.lines.join('\n');
    assert.ok(!text.includes(carol), 'the log holds the token sent as ?access_token=');
  });

  it('every field of every line is one of LOG_FIELDS (one naming scheme)', () => {
    for (const r of records()) {
      for (const key of Object.keys(r))
        assert.ok(LOG_FIELD_NAMES.has(key), `"${key}" is not in LOG_FIELDS: ${JSON.stringify(r)}`);
    }
  });

  it('one start-up line, with address, upstream, data dir, hook count and version', () => {
    const starts = records().filter((r) => /listening/i.test(String(r.msg)));
    assert.equal(starts.length, 1, JSON.stringify(starts));
    const [start] = starts;
    assert.equal(start!.msg, 'listening');
    assert.equal(start!.url, d.url);
    assert.equal(start!.opsUrl, d.opsUrl);
    assert.equal(start!.upstream, upstream.url);
    assert.equal(start!.dataDir, d.dataDir);
    assert.equal(start!.hooks, 0);
    assert.equal(start!.version, packageInfo().version);
  });
});
