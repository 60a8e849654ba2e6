import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { prettyLogs } from '../../src/daemon/logger.js';
import { LOG_FIELD_NAMES, LOG_FIELDS } from '../../src/observability/log-fields.js';
import { api, HOOKD_BIN, type HookdProcess, REPO_ROOT, spawnHookd, tempDir } from '../helpers/hookd.js';
import {
  closedPort,
  createHook,
  type Receiver,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// Logs for people and for machines: a debug line per proxied request, one naming
// scheme for every field (checked on a running daemon and on every log call in src/), pretty
// lines on a terminal, and 502/504 answers that name no internal address.

type Rec = Record<string, unknown>;
const records = (d: HookdProcess): Rec[] => d.lines.map((l) => JSON.parse(l) as Rec);

describe('at --log-level debug', () => {
  let upstream: Upstream;
  let receiver: Receiver;
  let d: HookdProcess;

  before(async () => {
    upstream = await startUpstream();
    receiver = await startReceiver();
    d = await spawnHookd(['--upstream', upstream.url, '--log-level', 'debug']);
  });

  after(async () => {
    if (d && d.proc.exitCode === null) await d.stop();
    await receiver?.close();
    await upstream?.close();
  });

  it('each proxied request has one line: method, path without the query, status, duration, hooks fired', async () => {
    await createHook(d, { PathPattern: '/orders/(*)', Methods: ['POST'], Callback: `${receiver.url}/cb` });
    await createHook(d, {
      PathPattern: '/orders',
      Methods: ['POST'],
      Type: 0,
      Callback: `${receiver.url}/early`,
    });
    const fired = await fetch(`${d.url}/orders/7?access_token=leaky`, { method: 'POST', body: '{}' });
    await fired.text();
    const missed = await fetch(`${d.url}/status/404?q=1`);
    await missed.text();
    await receiver.waitFor(2);
    await until(
      'two proxied request lines',
      () => records(d).filter((r) => r.msg === 'proxied request').length >= 2,
    );
    const lines = records(d).filter((r) => r.msg === 'proxied request');
    assert.equal(lines.length, 2, JSON.stringify(lines));
    const [a, b] = lines;
    assert.equal(a!.level, 'debug');
    assert.deepEqual(
      { method: a!.method, path: a!.path, status: a!.status, hooks: a!.hooks },
      { method: 'POST', path: '/orders/7', status: 200, hooks: 2 },
    );
    assert.equal(typeof a!.durationMs, 'number');
    assert.deepEqual(
      { method: b!.method, path: b!.path, status: b!.status, hooks: b!.hooks },
      { method: 'GET', path: '/status/404', status: 404, hooks: 0 },
    );
    assert.ok(!d.lines.join('\n').includes('leaky'), 'the query string is not logged');
  });

  it('every field of every line (debug ones included) is one of LOG_FIELDS', async () => {
    const dead = await closedPort();
    await createHook(d, { PathPattern: '/gone', Methods: ['GET'], Callback: `http://127.0.0.1:${dead}/cb` });
    await (await fetch(`${d.url}/gone`)).text();
    await until('a failed attempt', () =>
      records(d).some((r) => r.msg === 'delivery attempt' && r.outcome !== 'succeeded'),
    );
    for (const r of records(d))
      for (const key of Object.keys(r))
        assert.ok(LOG_FIELD_NAMES.has(key), `"${key}" is not in LOG_FIELDS: ${JSON.stringify(r)}`);
  });
});

describe('at --log-level info', () => {
  it('proxied requests write no line', async () => {
    const upstream = await startUpstream();
    const d = await spawnHookd(['--upstream', upstream.url, '--log-level', 'info']);
    try {
      for (let i = 0; i < 5; i++) await (await fetch(`${d.url}/x/${i}`)).text();
      // A marker: an info line written after those requests were answered (a proxied request's
      // line is written as its answer is sent); the log is one ordered stream.
      await createHook(d, { PathPattern: '/marker', Methods: ['GET'], Callback: `${upstream.url}/cb` });
      await until('the marker line', () => records(d).some((r) => r.msg === 'hook created'));
      assert.equal(
        records(d).some((r) => r.msg === 'proxied request'),
        false,
      );
      assert.equal(upstream.requests.length, 5);
    } finally {
      await d.stop();
      await upstream.close();
    }
  });
});

describe('502 and 504 name no internal address', () => {
  it('an unreachable upstream: 502 without its address; the log line has it', async () => {
    const port = await closedPort();
    const d = await spawnHookd(['--upstream', `http://127.0.0.1:${port}`]);
    try {
      const r = await api<{ status: number; detail: string }>(d.url, undefined, 'GET', '/anything');
      assert.equal(r.status, 502);
      assert.doesNotMatch(r.text, new RegExp(`127\\.0\\.0\\.1|:${port}|ECONNREFUSED`));
      assert.match(r.body.detail, /upstream service cannot be reached/);
      await until('the warning', () => records(d).some((x) => x.msg === 'Bad gateway'));
      const line = records(d).find((x) => x.msg === 'Bad gateway')!;
      assert.equal(line.upstream, `http://127.0.0.1:${port}`);
      assert.equal(line.path, '/anything');
    } finally {
      await d.stop();
    }
  });

  it('a slow upstream: 504 without its address', async () => {
    const upstream = await startUpstream(() => {
      // never answers
    });
    const d = await spawnHookd(['--upstream', upstream.url, '--upstream-timeout', '200']);
    try {
      const r = await api<{ detail: string }>(d.url, undefined, 'GET', '/slow');
      assert.equal(r.status, 504);
      assert.ok(!r.text.includes(String(upstream.port)), r.text);
      assert.doesNotMatch(r.text, /127\.0\.0\.1/);
      assert.match(r.body.detail, /did not answer within 200 ms/);
    } finally {
      await d.stop('SIGKILL');
      await upstream.close();
    }
  });
});

describe('pretty lines for people', () => {
  it('auto is pretty on a terminal only; json and pretty force either', () => {
    assert.equal(prettyLogs('auto', true), true);
    assert.equal(prettyLogs('auto', false), false);
    assert.equal(prettyLogs('json', true), false);
    assert.equal(prettyLogs('pretty', false), true);
  });

  it('--log-format pretty writes readable lines with the level and the message', async () => {
    // spawnHookd reads the JSON start-up line, so this run is read directly.
    const child = spawn(
      process.execPath,
      [
        HOOKD_BIN,
        '--data-dir',
        tempDir(),
        '--listen',
        '127.0.0.1:0',
        '--console-listen',
        'off',
        '--ops-listen',
        'off',
        '--log-format',
        'pretty',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
    );
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
    });
    try {
      await until('the start-up line', () => /listening/.test(out), 15_000);
      assert.match(out, /INFO.*listening/);
      assert.doesNotMatch(out.split('\n').find((l) => /listening/.test(l)) ?? '', /^\{/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});

describe('LOG_FIELDS', () => {
  /** Keys of the object literal passed first to every log call in src/ (`log.info({ a, b: 1 }, …)`). */
  function keysOfLogCalls(): { file: string; key: string }[] {
    const found: { file: string; key: string }[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (name.endsWith('.ts') && !p.includes(`${join('src', 'hookctl')}`)) scan(p);
      }
    };
    const scan = (file: string) => {
      const text = readFileSync(file, 'utf8');
      const call =
        /\b(?:log|logger|this\.log|this\.logger|this\.opts\.log|req\.log|opts\.log)\??\.(?:fatal|error|warn|info|debug|trace)\(\s*\{/g;
      for (let m = call.exec(text); m; m = call.exec(text)) {
        let depth = 0;
        let i = m.index + m[0].length - 1;
        const start = i;
        for (; i < text.length; i++) {
          if (text[i] === '{') depth++;
          else if (text[i] === '}' && --depth === 0) break;
        }
        const body = text.slice(start + 1, i).replace(/'[^']*'|`[^`]*`|"[^"]*"/g, "''");
        // Keys at any depth of the literal: `name:` and shorthand `name,` / `name }`.
        for (const k of body.matchAll(/(?:^|[{,])\s*([A-Za-z_$][\w$]*)\s*(?=[:,}]|$)/g)) {
          const key = k[1]!;
          if (/^(true|false|null|undefined)$/.test(key)) continue;
          found.push({ file, key });
        }
      }
    };
    walk(join(REPO_ROOT, 'src'));
    return found;
  }

  it('every field that a log call in src/ writes is in the list', () => {
    const keys = keysOfLogCalls();
    assert.ok(keys.length > 50, `only ${keys.length} fields found: the scan is broken`);
    const unknown = keys.filter(({ key }) => !LOG_FIELD_NAMES.has(key));
    assert.deepEqual(
      unknown.map(({ file, key }) => `${file.slice(REPO_ROOT.length + 1)}: ${key}`),
      [],
      'log fields not in LOG_FIELDS',
    );
  });

  it('the log fields reference (docs/reference/log-fields.md) lists every field', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs', 'reference', 'log-fields.md'), 'utf8');
    for (const name of Object.keys(LOG_FIELDS))
      assert.ok(doc.includes(`| \`${name}\` |`), `\`${name}\` in docs/reference/log-fields.md`);
  });
});
