import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load-config.js';
import { EXIT } from '../../src/hookd-cli/main.js';
import { packageInfo } from '../../src/util/package-info.js';
import {
  api,
  HOOKD_BIN,
  type HookdProcess,
  REPO_ROOT,
  spawnHookd,
  startHookd,
  type TestDaemon,
  tempDir,
} from '../helpers/hookd.js';
import { metricSample as sample } from '../helpers/metrics.js';
import { requireOrSkip } from '../helpers/require.js';
import {
  addUser,
  createHook,
  type Receiver,
  sleep,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { assertBuilt, cleanEnv, hookctl, runProcess } from '../hookctl/helpers.js';

// Operating hookd: metrics after known traffic, health and readiness while draining,
// SIGTERM, reload by signal and by API, check-config, and the systemd unit.

/** Data dirs and config dirs of spawned daemons, removed at the end. */
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The log records (pino JSON lines) of a spawned hookd, from line `from` on. */
function records(d: HookdProcess, from = 0): Record<string, unknown>[] {
  return d.lines.slice(from).flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/**
 * bin/hookd.js without `--allow-callback-net`, whose flag would override the config file's
 * `allowCallbackNets` that the reload tests change.
 */
async function spawnBare(args: string[]): Promise<HookdProcess> {
  const d = await spawnHookd(args, { allowLoopback: false });
  dirs.push(d.dataDir);
  return d;
}

/** Raw HTTP/1.1 on one kept-alive connection: write a request, read one response. */
class Connection {
  private buf = '';
  private closed = false;
  constructor(readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => {
      this.buf += c;
    });
    socket.on('close', () => {
      this.closed = true;
    });
  }

  static async open(url: string): Promise<Connection> {
    const u = new URL(url);
    const socket = connect(Number(u.port), u.hostname);
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new Connection(socket);
  }

  send(method: string, path: string): void {
    this.socket.write(`${method} ${path} HTTP/1.1\r\nHost: hookd\r\n\r\n`);
  }

  /** The next complete response (Content-Length or chunked). */
  async response(timeoutMs = 10_000): Promise<{ status: number; headers: string; body: string }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end !== -1) {
        const head = this.buf.slice(0, end);
        const rest = this.buf.slice(end + 4);
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)![1]);
        const len = /\r\ncontent-length: *(\d+)/i.exec(head);
        if (len && rest.length >= Number(len[1])) {
          this.buf = rest.slice(Number(len[1]));
          return { status, headers: head, body: rest.slice(0, Number(len[1])) };
        }
        const chunkedEnd = rest.indexOf('0\r\n\r\n');
        if (!len && /transfer-encoding: *chunked/i.test(head) && chunkedEnd !== -1) {
          this.buf = rest.slice(chunkedEnd + 5);
          const body = rest
            .slice(0, chunkedEnd)
            .split('\r\n')
            .filter((_, i) => i % 2 === 1)
            .join('');
          return { status, headers: head, body };
        }
      }
      if (this.closed) throw new Error(`connection closed; unread: ${JSON.stringify(this.buf)}`);
      if (Date.now() > deadline)
        throw new Error(`no response within ${timeoutMs} ms: ${JSON.stringify(this.buf)}`);
      await sleep(10);
    }
  }
}

describe('GET /metrics after known traffic', () => {
  let upstream: Upstream;
  let ok: Receiver;
  let failing: Receiver;
  let d: TestDaemon;

  before(async () => {
    upstream = await startUpstream();
    ok = await startReceiver();
    failing = await startReceiver({ status: 500 });
    d = await startHookd({ upstream: upstream.url });
  });

  after(async () => {
    await d?.close();
    await ok?.close();
    await failing?.close();
    await upstream?.close();
  });

  const scrape = async () => {
    const r = await api<string>(d.opsUrl, undefined, 'GET', '/metrics');
    assert.equal(r.status, 200, 'metrics need no token on the operations listener');
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return r.text;
  };

  it('counts proxied requests by status, fired hooks by phase and attempts by outcome, exactly', async () => {
    await createHook(d, { PathPattern: '/fire', Methods: ['GET'], Callback: `${ok.url}/after` });
    await createHook(d, { PathPattern: '/early', Methods: ['GET'], Type: 0, Callback: `${ok.url}/before` });
    const get = async (path: string) => {
      const r = await fetch(d.url + path);
      await r.text();
      return r.status;
    };
    // 4 × 200 and 2 × 404 through the proxy; 2 AfterCompletion and 1 BeforeCompletion firings.
    for (const p of ['/fire/a', '/fire/b', '/other', '/early/x']) assert.equal(await get(p), 200);
    for (const p of ['/status/404', '/status/404']) assert.equal(await get(p), 404);
    await ok.waitFor(3);
    await until(
      '3 attempts in the metrics',
      async () =>
        (sample(await scrape(), 'hookd_delivery_attempts_total{outcome="succeeded",transport="http"}') ??
          0) >= 3,
    );
    const text = await scrape();
    const expect: [string, number | undefined][] = [
      ['hookd_proxied_requests_total{status="200"}', 4],
      ['hookd_proxied_requests_total{status="404"}', 2],
      ['hookd_hooks_fired_total{phase="after"}', 2],
      ['hookd_hooks_fired_total{phase="before"}', 1],
      ['hookd_delivery_attempts_total{outcome="succeeded",transport="http"}', 3],
      ['hookd_delivery_attempts_total{outcome="retrying",transport="http"}', undefined],
      ['hookd_dead_letters_total', 0],
      ['hookd_delivery_attempt_duration_seconds_count{outcome="succeeded",transport="http"}', 3],
      [`hookd_build_info{version="${packageInfo().version}",node="${process.version}"}`, 1],
      ['hookd_outbox_depth', 0],
      ['hookd_hooks', 2],
      ['hookd_tail_clients', 0],
    ];
    for (const [series, value] of expect) assert.equal(sample(text, series), value, series);
    assert.match(text, /^# TYPE hookd_proxied_requests_total counter$/m);
    assert.match(text, /^# TYPE hookd_outbox_depth gauge$/m);
    assert.match(text, /^# TYPE hookd_breaker_state gauge$/m);
    assert.match(text, /^hookd_process_\w*resident_memory_bytes \d+/m);
  });

  it('a failing receiver shows as a retrying attempt, outbox depth 1 and a breaker state for its endpoint', async () => {
    await createHook(d, { PathPattern: '/broken', Methods: ['GET'], Callback: `${failing.url}/cb` });
    const r = await api(d.url, d.token, 'POST', '/_hookd/report', {
      Method: 'GET',
      Path: '/broken/1',
      StatusCode: 200,
      Phase: 'after',
    });
    assert.equal(r.status, 202);
    await failing.waitFor(1);
    await until(
      'the retrying attempt',
      async () =>
        sample(await scrape(), 'hookd_delivery_attempts_total{outcome="retrying",transport="http"}') === 1,
    );
    const text = await scrape();
    assert.equal(sample(text, 'hookd_hooks_fired_total{phase="after"}'), 3);
    assert.equal(sample(text, 'hookd_delivery_attempts_total{outcome="succeeded",transport="http"}'), 3);
    assert.equal(sample(text, 'hookd_outbox_depth'), 1, 'the failed delivery waits for its retry');
    // A 500 is the endpoint's failure; the host answered, so its circuit has nothing to count.
    assert.equal(
      sample(text, `hookd_breaker_state{destination="${failing.url}/cb",scope="endpoint"}`),
      0,
      'closed, counting',
    );
    assert.equal(sample(text, `hookd_breaker_state{destination="${failing.url}",scope="host"}`), undefined);
    assert.equal(sample(text, 'hookd_proxied_requests_total{status="200"}'), 4, 'a report is not proxied');
  });
});

describe('health and readiness', () => {
  it('GET /healthz and /readyz answer 200 without a token on the operations listener', async () => {
    const d = await startHookd();
    try {
      const h = await api(d.opsUrl, undefined, 'GET', '/healthz');
      assert.equal(h.status, 200);
      assert.deepEqual(h.body, { status: 'ok' });
      const r = await api<{ status: string }>(d.opsUrl, undefined, 'GET', '/readyz');
      assert.equal(r.status, 200);
      assert.equal(r.body.status, 'ready');
    } finally {
      await d.close();
    }
  });

  it('while draining /readyz is 503 and the in-flight request is still answered (with Connection: close)', async () => {
    let release = () => {};
    const upstream = await startUpstream((req, res) => {
      req.resume();
      release = () => res.writeHead(200, { 'content-type': 'text/plain' }).end('slow done');
    });
    const d = await startHookd({ upstream: upstream.url, shutdownTimeoutMs: 30_000 });
    try {
      assert.equal((await api(d.opsUrl, undefined, 'GET', '/readyz')).status, 200, 'ready before the stop');
      const slow = fetch(`${d.url}/slow`);
      await until('the slow request at the upstream', () => upstream.requests.length === 1);
      const closing = d.hookd.close();
      // The operations listener stays up while draining, so probes see it.
      const ready = await api<{ draining: boolean }>(d.opsUrl, undefined, 'GET', '/readyz');
      assert.equal(ready.status, 503, ready.text);
      assert.equal(ready.body.draining, true);
      let stopped = false;
      void closing.then(() => {
        stopped = true;
      });
      await sleep(200);
      assert.equal(stopped, false, 'hookd stopped with a request in flight');
      release();
      const res = await slow;
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'slow done');
      assert.equal(res.headers.get('connection'), 'close', 'a draining hookd ends the connection');
      await closing;
    } finally {
      await upstream.close();
    }
  });

  it('SIGTERM: once the in-flight request is answered, hookd exits without waiting out the drain deadline', {
    timeout: 60_000,
  }, async () => {
    let release = () => {};
    const upstream = await startUpstream((req, res) => {
      req.resume();
      release = () => res.writeHead(200, { 'content-type': 'text/plain' }).end('slow done');
    });
    // A drain deadline far beyond the test's own timeout: an exit waiting it out fails the test.
    const d = await spawnHookd(['--upstream', upstream.url, '--shutdown-timeout', '600000']);
    dirs.push(d.dataDir);
    try {
      const conn = await Connection.open(d.url);
      conn.send('GET', '/slow');
      await until('the slow request at the upstream', () => upstream.requests.length === 1);
      const exited = d.stop();
      await until('the stopping log line', () => d.lines.some((l) => l.includes('"msg":"stopping')));
      release();
      const slow = await conn.response();
      assert.equal(slow.status, 200);
      // The client keeps its connection open, as a browser or a reverse proxy does.
      assert.equal(await exited, 0);
      assert.match(slow.headers, /\r\nconnection: close/i, 'a draining hookd keeps the connection alive');
    } finally {
      await d.kill();
      await upstream.close();
    }
  });

  it('SIGTERM with nothing in flight: hookd exits at once, without waiting out the drain deadline', {
    timeout: 60_000,
  }, async () => {
    // The deadline is far beyond the test's timeout: only an exit that waits for nothing passes.
    const d = await spawnHookd(['--shutdown-timeout', '600000']);
    dirs.push(d.dataDir);
    assert.equal(await d.stop(), 0);
  });
});

describe('reload', () => {
  it('SIGHUP applies a changed config file: events switched on, the hook API answers again', async () => {
    const dir = tempDir('hookd-reload-');
    dirs.push(dir);
    const file = join(dir, 'hookd.json');
    writeFileSync(file, JSON.stringify({ events: { enabled: false } }));
    const d = await spawnHookd(['--config', file]);
    dirs.push(d.dataDir);
    try {
      const hook = { PathPattern: '/x', Methods: ['GET'], Callback: 'http://127.0.0.1:9/cb' };
      const off = await api(d.url, d.token, 'POST', '/hooks', hook);
      assert.equal(off.status, 503, off.text);

      writeFileSync(file, JSON.stringify({ events: { enabled: true } }));
      const from = d.lines.length;
      d.proc.kill('SIGHUP');
      await until('the reload log line', () =>
        records(d, from).some((r) => r.msg === 'configuration reloaded'),
      );
      const line = records(d, from).find((r) => r.msg === 'configuration reloaded')!;
      assert.deepEqual(line.applied, ['eventsEnabled']);
      const on = await api(d.url, d.token, 'POST', '/hooks', hook);
      assert.equal(on.status, 201, on.text);
    } finally {
      await d.stop();
    }
  });

  it('SIGHUP with allowCallbackNets: a loopback callback refused before is accepted and delivered; a bad CIDR or an unknown key is refused, naming it, and the old config stays', async () => {
    const receiver = await startReceiver();
    const dir = tempDir('hookd-reload-');
    dirs.push(dir);
    const file = join(dir, 'hookd.json');
    writeFileSync(file, JSON.stringify({ allowCallbackNets: [] }));
    const d = await spawnBare(['--config', file]);
    const hook = { PathPattern: '/nets', Methods: ['GET'], Callback: `${receiver.url}/cb` };
    const hup = async (config: unknown, msg: string) => {
      writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
      const from = d.lines.length;
      d.proc.kill('SIGHUP');
      await until(`"${msg}" in the log`, () => records(d, from).some((r) => r.msg === msg));
      return records(d, from).find((r) => r.msg === msg)!;
    };
    try {
      const refused = await api(d.url, d.token, 'POST', '/hooks', hook);
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.text, /127\.0\.0\.1/);
      assert.match(refused.text, /--allow-callback-net/);

      const applied = await hup({ allowCallbackNets: ['127.0.0.0/8'] }, 'configuration reloaded');
      assert.deepEqual(applied.applied, ['allowCallbackNets']);
      assert.equal((await api(d.url, d.token, 'POST', '/hooks', hook)).status, 201);
      const fire = () =>
        api(d.url, d.token, 'POST', '/_hookd/report', { Method: 'GET', Path: '/nets/1', StatusCode: 200 });
      await fire();
      await receiver.waitFor(1);

      const badCidr = await hup(
        { allowCallbackNets: ['127.0.0.0/33'] },
        'reload refused; the running configuration is kept',
      );
      assert.equal(badCidr.level, 'warn');
      assert.match(String(badCidr.err), /allowCallbackNets/);
      assert.match(String(badCidr.err), /127\.0\.0\.0\/33/);

      const unknown = await hup(
        { allowCallbackNetz: ['127.0.0.0/8'] },
        'reload refused; the running configuration is kept',
      );
      assert.match(String(unknown.err), /unknown key "allowCallbackNetz"/);
      assert.match(String(unknown.err), /did you mean "allowCallbackNets"/);

      // Still the last good configuration: loopback callbacks are accepted and delivered.
      assert.equal((await api(d.url, d.token, 'POST', '/hooks', hook)).status, 201);
      receiver.reset();
      await fire();
      await receiver.waitFor(2);
      assert.equal(d.proc.exitCode, null, 'a bad config on SIGHUP must not stop hookd');
    } finally {
      await d.stop();
      await receiver.close();
    }
  });

  it('hookctl reload (admin) applies a change and prints what was applied; an invalid file is refused (400 naming the key) and the old config kept', async () => {
    assertBuilt();
    const dir = tempDir('hookd-reload-');
    dirs.push(dir);
    const file = join(dir, 'hookd.json');
    const write = (config: unknown) => writeFileSync(file, JSON.stringify(config));
    write({ logLevel: 'info', events: { enabled: false } });
    const d = await spawnHookd(['--config', file]);
    dirs.push(d.dataDir);
    const env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
    try {
      write({ logLevel: 'info', events: { enabled: true } });
      const r = await hookctl(['reload'], { env });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /reloaded its configuration; applied: eventsEnabled/);
      assert.equal((await api(d.url, d.token, 'GET', '/hooks')).status, 200, 'events are on now');

      const same = await hookctl(['reload', '-o', 'json'], { env });
      assert.equal(same.code, 0, same.stderr);
      assert.deepEqual(JSON.parse(same.stdout), { applied: [], restartRequired: [] });

      write({ logLevel: 'info', events: { enabled: true }, upstream: 'http://127.0.0.1:1' });
      const restart = await hookctl(['reload'], { env });
      assert.equal(restart.code, 0, restart.stderr);
      assert.match(restart.stderr, /only after a restart: upstream/);

      write({ logLevel: 'info', events: { enabled: false }, trustedProxies: ['10.0.0.0/99'] });
      const bad = await api<{ detail: string }>(d.url, d.token, 'POST', '/_hookd/reload');
      assert.equal(bad.status, 400, bad.text);
      assert.match(bad.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.match(bad.body.detail, /trustedProxies/);
      write({ logLevel: 'info', events: { enabled: false }, evnts: true });
      const cli = await hookctl(['reload'], { env });
      assert.equal(cli.code, 1, cli.stderr);
      assert.match(cli.stderr, /unknown key "evnts"/);
      // Neither refused file switched events off.
      assert.equal((await api(d.url, d.token, 'GET', '/hooks')).status, 200);
    } finally {
      await d.stop();
    }
  });

  it("a non-admin user's POST /reload is 403; without a token 401", async () => {
    const d = await startHookd();
    try {
      const bob = await addUser(d, 'bob');
      const r = await api(d.url, bob, 'POST', '/_hookd/reload');
      assert.equal(r.status, 403, r.text);
      assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal((await api(d.url, undefined, 'POST', '/_hookd/reload')).status, 401);
      assert.equal((await api(d.url, d.token, 'POST', '/_hookd/reload')).status, 200);
    } finally {
      await d.close();
    }
  });
});

describe('hookd check-config', () => {
  it('accepts contrib/hookd.example.json (exit 0)', async () => {
    assertBuilt();
    const r = await runProcess(
      process.execPath,
      [HOOKD_BIN, 'check-config', join(REPO_ROOT, 'contrib', 'hookd.example.json')],
      { env: cleanEnv() },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /hookd\.example\.json: valid/);
  });
});

describe('the systemd unit (contrib/systemd/hookd.service)', () => {
  const unitFile = join(REPO_ROOT, 'contrib', 'systemd', 'hookd.service');

  /** Every `Key=value` of the unit, values of repeated keys in order. */
  const directives = (): Map<string, string[]> => {
    const map = new Map<string, string[]>();
    for (const raw of readFileSync(unitFile, 'utf8').split('\n')) {
      const line = raw.trim();
      if (!line || line.startsWith('#') || line.startsWith(';') || line.startsWith('[')) continue;
      const i = line.indexOf('=');
      const key = line.slice(0, i).trim();
      map.set(key, [...(map.get(key) ?? []), line.slice(i + 1).trim()]);
    }
    return map;
  };
  const one = (key: string): string => {
    const v = directives().get(key);
    assert.ok(v && v.length > 0, `${key}= is missing`);
    return v.at(-1)!;
  };

  it('passes systemd-analyze verify', (t) => {
    const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
    if (probe.error) {
      return requireOrSkip(t, 'systemd-analyze is not installed here (apt-get install systemd)');
    }
    const r = spawnSync('systemd-analyze', ['verify', '--man=no', unitFile], { encoding: 'utf8' });
    // hookd is not installed system-wide here, so complaints about the ExecStart binary are
    // expected; the unit's own name (hookd.service) does not make a line one of those.
    const aboutBinary =
      /\bhookd(ctl)?\b.*(not found|No such file|not executable)|(not found|No such file|not executable).*\bhookd(ctl)?\b/i;
    const other = r.stderr
      .split('\n')
      .filter((l) => l.trim() !== '')
      .filter((l) => !aboutBinary.test(l.replaceAll('hookd.service', '')));
    assert.deepEqual(other, [], r.stderr);
    if (r.stderr.trim() === '') assert.equal(r.status, 0);
  });

  it('has the directives the deployment relies on', () => {
    assert.match(one('Type'), /^(exec|notify|simple)$/);
    assert.equal(one('StateDirectory'), 'hookd', 'hookd takes $STATE_DIRECTORY as its data dir');
    assert.equal(one('DynamicUser'), 'yes');
    assert.equal(one('ProtectSystem'), 'strict');
    assert.match(one('ProtectHome'), /^(yes|true|read-only|tmpfs)$/);
    assert.match(one('PrivateTmp'), /^(yes|true)$/);
    assert.match(one('NoNewPrivileges'), /^(yes|true)$/);
    const families = one('RestrictAddressFamilies').split(/\s+/);
    for (const f of ['AF_INET', 'AF_INET6']) assert.ok(families.includes(f), `${f} in ${families}`);
    // SIGHUP re-reads the configuration whatever the port and API base.
    assert.equal(one('ExecReload'), '/bin/kill -HUP $MAINPID');
    assert.match(one('ExecStart'), /\bhookd\b/);

    const stop = /^(\d+)(s|min)?$/.exec(one('TimeoutStopSec'));
    assert.ok(stop, `TimeoutStopSec=${one('TimeoutStopSec')}`);
    const stopMs = Number(stop[1]) * (stop[2] === 'min' ? 60_000 : 1000);
    const drainMs = loadConfig({ env: {}, flags: { dataDir: '/nonexistent' } }).shutdownTimeoutMs;
    assert.equal(drainMs, 10_000);
    assert.ok(
      stopMs > drainMs,
      `TimeoutStopSec (${stopMs} ms) must exceed the drain deadline (${drainMs} ms)`,
    );

    assert.equal(
      one('RestartPreventExitStatus'),
      String(EXIT.CONFIG),
      'a config error must not restart-loop',
    );
  });
});
