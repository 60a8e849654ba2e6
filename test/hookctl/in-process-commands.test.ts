import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { cleanEnv, closedPort, hookctlInProcess, hookFixtures, SAMPLE_HOOK } from './helpers.js';

// hookctl commands through their run seam (runCli(args, deps)), piped, against a real hookd:
// what a command asks the server, how it finds the server and the token, and what it prints.
// The exit status of the process, colour, completion and stdin piping stay with the spawned
// binary in hookctl.test.ts.

const HOOK = SAMPLE_HOOK;

let daemon: TestDaemon;
let env: NodeJS.ProcessEnv;
let dir: string;

const hookctl = hookctlInProcess;

const { file, ...fixtures } = hookFixtures(
  hookctl,
  () => env,
  () => dir,
);
const createHook = (doc: unknown = HOOK) => fixtures.createHook(doc);

before(async () => {
  daemon = await startHookd();
  dir = tempDir('hookctl-files-');
  env = cleanEnv({ HOOKD_URL: daemon.url, HOOKD_TOKEN: daemon.token });
});

after(async () => {
  await daemon.close();
});

describe('hookctl hooks in process (piped output)', () => {
  it('delete ID… deletes each one and says "deleted ID" on stderr', async () => {
    const a = await createHook();
    const b = await createHook();
    const r = await hookctl(['delete', a, b], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `deleted ${a}\ndeleted ${b}\n`);
    const gone = await hookctl(['get', a], { env });
    assert.equal(gone.code, 1);
  });

  it('a hook the server rejects prints the problem detail and every field error (1)', async () => {
    const bad = { pathPattern: '/x', Methods: [], Callback: 'ftp://example.com/' };
    const r = await hookctl(['create', '-f', file('invalid-hook.json', bad)], { env });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^error: the hook has \d+ errors/m);
    assert.match(r.stderr, /^ {2}- PathPattern: is required$/m);
    assert.match(r.stderr, /^ {2}- pathPattern: is not a hook field; did you mean `PathPattern`\?$/m);
    assert.match(r.stderr, /^ {2}- Methods: /m);
    assert.match(r.stderr, /^ {2}- Callback: /m);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  });
});

describe('hookctl server and token resolution in process', () => {
  it('a local hookd: the token comes from <data-dir>/admin.token (HOOKD_DATA_DIR)', async () => {
    const r = await hookctl(['list'], {
      env: cleanEnv({ HOOKD_URL: daemon.url, HOOKD_DATA_DIR: daemon.dataDir }),
    });
    assert.equal(r.code, 0, r.stderr);
  });

  it("a local hookd: the daemon's default data dir ($XDG_STATE_HOME/hookd) is used without HOOKD_DATA_DIR", async () => {
    const local = await startHookd({}, { dataDir: join(tempDir('hookctl-state-'), 'hookd') });
    try {
      const state = join(local.dataDir, '..');
      const r = await hookctl(['list'], { env: cleanEnv({ HOOKD_URL: local.url, XDG_STATE_HOME: state }) });
      assert.equal(r.code, 0, r.stderr);
    } finally {
      await local.close();
    }
  });

  it('--server beats HOOKD_URL', async () => {
    const port = await closedPort();
    const r = await hookctl(['--server', daemon.url, 'list'], {
      env: { ...env, HOOKD_URL: `http://127.0.0.1:${port}` },
    });
    assert.equal(r.code, 0, r.stderr);
  });
});

describe('hookctl profiles in process', () => {
  it('--profile selects a profile; profile use switches the current one; unknown names exit 2', async () => {
    const base = cleanEnv({ HOOKD_DATA_DIR: tempDir('hookctl-nodata-') });
    const port = await closedPort();
    const login = await hookctl(['--profile', 'good', 'login', '--server', daemon.url], {
      env: base,
      input: daemon.token,
    });
    assert.equal(login.code, 0, login.stderr);
    // A second profile for a daemon that is not running; writing it needs no server check to pass,
    // so it is written by hand the way conf would.
    const path = join(base.XDG_CONFIG_HOME!, 'hookctl', 'config.json');
    const saved = JSON.parse(readFileSync(path, 'utf8')) as {
      current: string;
      profiles: Record<string, unknown>;
    };
    saved.profiles.down = { server: `http://127.0.0.1:${port}`, token: 'x' };
    writeFileSync(path, JSON.stringify(saved));

    assert.equal((await hookctl(['list'], { env: base })).code, 0);
    assert.equal((await hookctl(['--profile', 'down', 'list'], { env: base })).code, 3);
    assert.equal((await hookctl(['list'], { env: { ...base, HOOKCTL_PROFILE: 'down' } })).code, 3);
    const use = await hookctl(['profile', 'use', 'down'], { env: base });
    assert.equal(use.code, 0, use.stderr);
    assert.equal((await hookctl(['list'], { env: base })).code, 3);
    assert.equal((await hookctl(['profile', 'use', 'good'], { env: base })).code, 0);
    assert.equal((await hookctl(['list'], { env: base })).code, 0);

    const unknown = await hookctl(['--profile', 'nope', 'list'], { env: base });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no profile named "nope"/);
    assert.equal((await hookctl(['profile', 'use', 'nope'], { env: base })).code, 2);
  });

  it("a profile's token is not sent to another server given with --server", async () => {
    const base = cleanEnv({ HOOKD_DATA_DIR: tempDir('hookctl-nodata-') });
    const login = await hookctl(['login', '--server', daemon.url], { env: base, input: daemon.token });
    assert.equal(login.code, 0, login.stderr);
    const other = daemon.url.replace('127.0.0.1', 'localhost');
    const r = await hookctl(['--server', other, 'list'], { env: base });
    assert.equal(r.code, 4);
    assert.match(r.stderr, /profile default is for/);
  });
});

describe('hookctl validate in process (no server)', () => {
  const offline = () => cleanEnv({ HOOKD_URL: 'http://127.0.0.1:1' });

  it('a valid hook: exit 0; -o json prints it with defaults filled in', async () => {
    const path = file('valid.json', HOOK);
    const r = await hookctl(['validate', '-f', path], { env: offline() });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${path}: valid\n`);
    const json = await hookctl(['validate', '-f', '-', '-o', 'json'], {
      env: offline(),
      input: JSON.stringify(HOOK),
    });
    assert.equal(json.code, 0);
    const doc = JSON.parse(json.stdout) as Record<string, unknown>;
    assert.equal(doc.Type, 1);
    assert.equal(doc.CallbackMethod, 'POST');
  });

  it('a hook that breaks rules: exit 1 listing every problem', async () => {
    const bad = {
      PathPattern: '/a/ts-*',
      Methods: ['GET'],
      Callback: 'http://x.example/',
      Type: 0,
      StatusCodeWhiteList: [200],
      Extra: 1,
    };
    const r = await hookctl(['validate', '-f', file('rules.json', bad)], { env: offline() });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: .*rules\.json: 3 errors$/m);
    assert.match(r.stderr, /^ {2}- PathPattern: /m);
    assert.match(r.stderr, /^ {2}- StatusCodeWhiteList: must be empty for Type 0/m);
    assert.match(r.stderr, /^ {2}- Extra: is not a hook field/m);
  });

  it('not JSON: exit 2 with FILE:LINE:COLUMN', async () => {
    const path = file('notjson.json', '{\n  "PathPattern": \'/x\'\n}');
    const r = await hookctl(['validate', '-f', path], { env: offline() });
    assert.equal(r.code, 2);
    assert.ok(r.stderr.includes(`${path}:2:18: `), r.stderr);
  });
});
