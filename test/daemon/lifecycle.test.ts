import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { api, HOOKD_BIN, type HookdProcess, spawnHookd, tempDir } from '../helpers/hookd.js';

type Daemon = HookdProcess;

const dirs: string[] = [];
const running = new Set<Daemon>();
after(async () => {
  for (const d of running) await d.kill();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function newDataDir(): string {
  const dir = tempDir('hookd-lifecycle-');
  dirs.push(dir);
  return dir;
}

/** bin/hookd.js on a random loopback port (spawnHookd), killed at the end if a test left it running. */
async function startDaemon(
  dataDir: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<Daemon> {
  const d = await spawnHookd(args, { dataDir, env });
  running.add(d);
  void d.exited.then(() => running.delete(d));
  return d;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `hookd ARGS` to completion. */
function hookd(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [HOOKD_BIN, ...args],
      { env: { ...process.env, HOOKD_LOG_LEVEL: 'warn', ...env }, timeout: 60000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Resolves once the daemon has logged a line matching `re`; fails after 15 s. */
async function waitForLine(d: Daemon, re: RegExp): Promise<void> {
  for (let waited = 0; waited < 15000; waited += 20) {
    if (d.lines.some((l) => re.test(l))) return;
    await sleep(20);
  }
  throw new Error(`hookd never logged ${re}: ${d.lines.join('\n')}`);
}

const hook = (n: number | string, persist = true) => ({
  PathPattern: `/repositories/*/timeseries/(*)/${n}`,
  Callback: 'http://127.0.0.1:9/hook',
  Methods: ['GET'],
  Persist: persist,
});

type Stored = { Id: string } & Record<string, unknown>;

async function allHooks(d: Daemon): Promise<Stored[]> {
  const r = await api<Stored[]>(d.url, d.token, 'GET', '/hooks?limit=1000');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('link'), null, 'more than 1000 hooks');
  return r.body;
}

describe('hookd restarts (SIGTERM)', () => {
  const dataDir = newDataDir();
  let first: Daemon;
  let second: Daemon;
  let kept: Stored;
  let gone: Stored;
  let firstExit: number | null;

  before(async () => {
    first = await startDaemon(dataDir);
    const a = await api<Stored>(first.url, first.token, 'POST', '/hooks', {
      ...hook('kept'),
      Type: 1,
      StatusCodeWhiteList: [200, 201],
      CallbackMethod: 'PUT',
      CallbackContent: '{"p":"$REQUEST_PATH","c":"$1"}',
      CallbackContentMediaType: 'application/json; charset=utf-8',
      Headers: { 'X-Tenant': 'acme' },
    });
    assert.equal(a.status, 201, a.text);
    kept = a.body;
    const b = await api<Stored>(first.url, first.token, 'POST', '/hooks', hook('gone', false));
    assert.equal(b.status, 201, b.text);
    gone = b.body;
    firstExit = await first.stop('SIGTERM');
    second = await startDaemon(dataDir);
  });
  after(async () => {
    if (running.has(second)) await second.stop();
  });

  it('SIGTERM stops hookd with exit code 0, saying so in its log', async () => {
    assert.equal(firstExit, 0, first.stderr());
    const msgs = first.lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
    assert.ok(msgs.includes('stopped'), msgs.join('\n'));
    assert.equal(first.stderr(), '');
  });

  it('a Persist: true hook survives the restart exactly as it was', async () => {
    const r = await api(second.url, second.token, 'GET', `/hooks/${kept.Id}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, kept);
  });

  it('a Persist: false hook is gone after the restart', async () => {
    assert.equal((await api(second.url, second.token, 'GET', `/hooks/${gone.Id}`)).status, 404);
    assert.deepEqual(
      (await allHooks(second)).map((h) => h.Id),
      [kept.Id],
    );
  });

  it('admin.token is mode 0600 and the same across restarts', () => {
    const file = join(dataDir, 'admin.token');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.match(first.token, /^hkd_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    assert.equal(second.token, first.token);
    assert.equal(readFileSync(file, 'utf8'), `${first.token}\n`);
  });

  it('the store file is readable by its owner only', () => {
    assert.equal(statSync(join(dataDir, 'hookd.db')).mode & 0o777, 0o600);
  });

  it('the first start logs where the admin token is, never the token itself', () => {
    const first_ = first.lines.map((l) => JSON.parse(l) as { msg: string; file?: string });
    const note = first_.find((r) => /first start/.test(r.msg));
    assert.ok(note, first.lines.join('\n'));
    assert.equal(note.file, join(dataDir, 'admin.token'));
    const secret = first.token.slice(17);
    for (const d of [first, second]) {
      const all = d.lines.join('\n') + d.stderr();
      assert.equal(all.includes(secret), false, 'the token secret is in the log');
      assert.equal(all.includes(first.token), false, 'the token is in the log');
    }
    // The second start has users already: no new admin, no new note.
    assert.equal(
      second.lines.some((l) => /first start/.test(l)),
      false,
    );
  });

  it('a second hookd on a port in use exits 1, naming the problem', async () => {
    const port = new URL(second.url).port;
    const run = await hookd(['--data-dir', newDataDir(), '--listen', `127.0.0.1:${port}`]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /cannot listen/);
    assert.match(run.stderr, /EADDRINUSE|in use/);
    assert.match(run.stderr, /the API and proxy listener's address .* --listen HOST:PORT/);
    assert.equal((await api(second.opsUrl, undefined, 'GET', '/healthz')).status, 200);
  });

  it('SIGINT stops hookd with exit code 0 too', async () => {
    // The API works before the signal, and the store keeps the hook created just before it.
    const r = await api<Stored>(second.url, second.token, 'POST', '/hooks', hook('late'));
    assert.equal(r.status, 201);
    assert.equal(await second.stop('SIGINT'), 0, second.stderr());
    const third = await startDaemon(dataDir);
    try {
      assert.equal((await api(third.url, third.token, 'GET', `/hooks/${r.body.Id}`)).status, 200);
    } finally {
      assert.equal(await third.stop(), 0);
    }
  });
});

describe('hookd killed with SIGKILL', () => {
  it('keeps every acknowledged create, replace and delete', async () => {
    const dataDir = newDataDir();
    const d = await startDaemon(dataDir);
    const created: Stored[] = [];
    // Eight clients at once, the way a deploy script or a CI job would hit it.
    const TOTAL = 200;
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < TOTAL) {
          const n = next++;
          const r = await api<Stored>(d.url, d.token, 'POST', '/hooks', hook(n));
          assert.equal(r.status, 201, r.text);
          created.push(r.body);
        }
      }),
    );
    const ephemeral = await api<Stored>(d.url, d.token, 'POST', '/hooks', hook('ephemeral', false));
    assert.equal(ephemeral.status, 201);
    const deleted = created.slice(0, 10);
    for (const h of deleted)
      assert.equal((await api(d.url, d.token, 'DELETE', `/hooks/${h.Id}`)).status, 204);
    const replaced = created[10]!;
    const put = await api<Stored>(d.url, d.token, 'PUT', `/hooks/${replaced.Id}`, {
      ...hook('replaced'),
      Methods: ['POST'],
    });
    assert.equal(put.status, 200);

    await d.kill();
    const { signal } = await d.exited;
    assert.equal(signal, 'SIGKILL');

    const again = await startDaemon(dataDir);
    try {
      assert.equal(again.token, d.token);
      const stored = await allHooks(again);
      const expected = created.filter((h) => !deleted.includes(h)).map((h) => h.Id);
      assert.deepEqual(
        stored.map((h) => h.Id),
        [...expected].sort(),
      );
      const r = stored.find((h) => h.Id === replaced.Id);
      assert.deepEqual(r, put.body);
      const sample = created[150]!;
      assert.deepEqual(
        stored.find((h) => h.Id === sample.Id),
        sample,
      );
    } finally {
      await again.stop();
    }
  });
});

describe('SIGTERM finishes what is in flight', () => {
  it('a request that is half sent when the signal arrives is still answered, and kept', async () => {
    const dataDir = newDataDir();
    const d = await startDaemon(dataDir);
    const body = JSON.stringify(hook('in-flight'));
    const u = new URL(d.url);
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: u.hostname,
          port: u.port,
          method: 'POST',
          path: '/hooks',
          agent: false,
          headers: {
            authorization: `Bearer ${d.token}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            // hookd answers 100 Continue once it has read the request head: proof that the
            // request is in flight before the signal is sent.
            expect: '100-continue',
          },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => {
            text += c.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.on('continue', () => {
        req.write(body.slice(0, 10));
        d.proc.kill('SIGTERM');
        // The rest of the body goes only once hookd has logged that it is stopping.
        waitForLine(d, /"msg":"stopping/).then(() => req.end(body.slice(10)), reject);
      });
      req.flushHeaders();
    });
    const r = await response;
    assert.equal(r.status, 201, r.text);
    const { code } = await d.exited;
    running.delete(d);
    assert.equal(code, 0, d.stderr());

    const again = await startDaemon(dataDir);
    try {
      const id = (JSON.parse(r.text) as { Id: string }).Id;
      assert.equal((await api(again.url, again.token, 'GET', `/hooks/${id}`)).status, 200);
    } finally {
      await again.stop();
    }
  });
});

describe('hookd --no-events', () => {
  it('answers the hook API with 503 and keeps health endpoints up', async () => {
    const d = await startDaemon(newDataDir(), ['--no-events']);
    try {
      const r = await api<{ code: string; detail: string }>(d.url, d.token, 'POST', '/hooks', hook(1));
      assert.equal(r.status, 503);
      assert.equal(r.body.code, 'EVENTS_DISABLED');
      assert.match(r.body.detail, /--no-events/);
      assert.equal((await api(d.opsUrl, undefined, 'GET', '/healthz')).status, 200);
      const listening = d.lines
        .map((l) => JSON.parse(l) as { msg: string; events?: boolean })
        .find((x) => x.msg === 'listening');
      assert.equal(listening?.events, false);
    } finally {
      assert.equal(await d.stop(), 0);
    }
  });
});

describe('hookd refuses a bad configuration with exit code 2', () => {
  const configDir = newDataDir();
  const file = (name: string, doc: unknown) => {
    const f = join(configDir, name);
    writeFileSync(f, JSON.stringify(doc));
    return f;
  };

  const CASES: [string, string[], NodeJS.ProcessEnv, RegExp[]][] = [
    ['an unknown flag', ['--bogus'], {}, [/unknown option '--bogus'/]],
    ['a bad --listen', ['--listen', 'nope'], {}, [/--listen/, /HOST:PORT/]],
    [
      'a bad --allow-callback-net',
      ['--allow-callback-net', '10.0.0.0/99'],
      {},
      [/10\.0\.0\.0\/99/, /allow-callback-net/],
    ],
    ['a bad HOOKD_* variable', [], { HOOKD_BODY_LIMIT: 'lots' }, [/HOOKD_BODY_LIMIT/]],
    [
      'an unknown config file key',
      ['--config', 'CONFIG:unknown'],
      {},
      [/unknown key "listn"/, /did you mean "listen"/],
    ],
  ];
  const results = new Map<string, Run>();
  before(async () => {
    const unknown = file('unknown.json', { listn: '127.0.0.1:1' });
    // These processes stop at once; running them together keeps the suite short.
    await Promise.all(
      CASES.map(async ([what, args, env]) => {
        const argv = args.map((a) => (a === 'CONFIG:unknown' ? unknown : a));
        results.set(what, await hookd([...argv, '--data-dir', join(configDir, 'data')], env));
      }),
    );
  });

  for (const [what, , , patterns] of CASES) {
    it(what, () => {
      const run = results.get(what)!;
      assert.equal(run.code, 2, `${run.stdout}\n${run.stderr}`);
      for (const re of patterns) assert.match(run.stderr, re);
      assert.equal(/\n\s+at /.test(run.stderr), false, `a stack trace: ${run.stderr}`);
    });
  }

  it('did not start anything: no store was created', () => {
    assert.equal(existsSync(join(configDir, 'data', 'hookd.db')), false);
  });
});

describe('hookd check-config', () => {
  it('accepts a valid file with exit code 0', async () => {
    const dir = newDataDir();
    const f = join(dir, 'ok.json');
    writeFileSync(
      f,
      JSON.stringify({
        listen: '127.0.0.1:9999',
        events: { enabled: false },
        allowCallbackNets: ['10.0.0.0/8'],
      }),
    );
    const run = await hookd(['check-config', f]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /valid/);
  });

  it('refuses an invalid file with exit code 2, naming the key', async () => {
    const dir = newDataDir();
    const f = join(dir, 'bad.json');
    writeFileSync(f, JSON.stringify({ listen: '127.0.0.1:9999', evnets: { enabled: false } }));
    const run = await hookd(['check-config', f]);
    assert.equal(run.code, 2, run.stdout);
    assert.match(run.stderr, /evnets/);
  });

  it('refuses an invalid allowCallbackNets entry, as starting hookd would', async () => {
    const dir = newDataDir();
    const f = join(dir, 'cidr.json');
    writeFileSync(f, JSON.stringify({ allowCallbackNets: ['10.0.0.0/99'] }));
    const run = await hookd(['check-config', f]);
    assert.equal(run.code, 2, run.stdout);
  });
});
