import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { ANSI, cleanEnv, fakeStdin, runInProcess, SAMPLE_HOOK } from './helpers.js';

// Terminal behaviour, in-process with injected streams that claim to be a TTY (a child process
// cannot get a terminal in a test), against a real hookd.

const HOOK = SAMPLE_HOOK;

let daemon: TestDaemon;
let env: NodeJS.ProcessEnv;
let id: string;

before(async () => {
  daemon = await startHookd();
  env = cleanEnv({ HOOKD_URL: daemon.url, HOOKD_TOKEN: daemon.token });
});

after(async () => {
  await daemon.close();
});

describe('hookctl on a terminal', () => {
  it('an empty list says how to create a hook, on stderr, and exits 0', async () => {
    const r = await runInProcess(['list'], { env, tty: true });
    assert.equal(r.code, 0);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /no hooks yet/);
  });

  it('create prints the Id; list prints a table with a header and colour', async () => {
    const created = await runInProcess(['create', '-f', '-'], {
      env,
      tty: false,
      stdin: fakeStdin({ tty: false, input: JSON.stringify(HOOK) }),
    });
    assert.equal(created.code, 0, created.stderr);
    id = created.stdout.trim();
    const r = await runInProcess(['list'], { env, tty: true, columns: 200 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, ANSI);
    const plain = r.stdout.replace(/\u001b\[[0-9;]*m/g, '');
    const [header, row] = plain.split('\n');
    assert.deepEqual(header!.trim().split(/\s{2,}/), [
      'ID',
      'TYPE',
      'METHODS',
      'PATTERN',
      'CALLBACK',
      'STATE',
    ]);
    assert.deepEqual(row!.trim().split(/\s{2,}/), [
      id,
      'AfterCompletion',
      'GET',
      HOOK.PathPattern,
      HOOK.Callback,
      'active',
    ]);
    assert.doesNotMatch(plain, /\t/);
  });

  it('-o wide on a terminal has the extra headers', async () => {
    const r = await runInProcess(['list', '-o', 'wide', '--no-color'], { env, tty: true });
    const header = r.stdout
      .split('\n')[0]!
      .trim()
      .split(/\s{2,}/);
    assert.deepEqual(header.slice(6), [
      'WHITELIST',
      'BLACKLIST',
      'PERSIST',
      'MODIFIED',
      'CALLBACK METHOD',
      'DISABLED',
    ]);
  });

  it('NO_COLOR and --no-color turn colour off on a terminal', async () => {
    const noColor = await runInProcess(['list'], { env: { ...env, NO_COLOR: '1' }, tty: true });
    assert.equal(noColor.code, 0);
    assert.match(noColor.stdout, /^ID\s+TYPE/);
    assert.doesNotMatch(noColor.stdout, ANSI);
    const flag = await runInProcess(['--no-color', 'list'], { env, tty: true });
    assert.doesNotMatch(flag.stdout, ANSI);
    const bad = await runInProcess(['get', 'hk_nope'], { env: { ...env, NO_COLOR: '1' }, tty: true });
    assert.equal(bad.code, 1);
    assert.doesNotMatch(bad.stderr, ANSI);
  });

  it('get prints pretty JSON on a terminal', async () => {
    const r = await runInProcess(['get', id], { env, tty: true });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^\{\n {2}"Id": /);
    assert.equal((JSON.parse(r.stdout) as { Id: string }).Id, id);
  });

  it('-f - with a terminal on stdin prints the usage and exits 2 instead of waiting', async () => {
    const r = await runInProcess(['create', '-f', '-'], { env, tty: true, stdin: fakeStdin({ tty: true }) });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /standard input is a terminal/);
    assert.match(r.stderr, /^usage: hookctl create /m);
  });

  it('long values are cut to fit the terminal width', async () => {
    const long = { ...HOOK, Callback: `http://127.0.0.1:9/${'x'.repeat(200)}` };
    const created = await runInProcess(['create', '-f', '-'], {
      env,
      tty: false,
      stdin: fakeStdin({ tty: false, input: JSON.stringify(long) }),
    });
    assert.equal(created.code, 0, created.stderr);
    const r = await runInProcess(['list', '--no-color'], { env, tty: true });
    for (const line of r.stdout.split('\n')) assert.ok([...line].length <= 120, `fits 120 columns: ${line}`);
    assert.match(r.stdout, /…/);
  });
});

describe('hookctl login on a terminal', () => {
  it('prompts on stderr, reads the token without echo in raw mode, and saves it', async () => {
    const home = tempDir('hookctl-home-');
    const loginEnv = cleanEnv({ XDG_CONFIG_HOME: join(home, 'config') });
    const stdin = fakeStdin({ tty: true });
    // Typed with a typo fixed by backspace, then Enter.
    stdin.write(`${daemon.token}x\u007f\r`);
    const r = await runInProcess(['login', '--server', daemon.url], { env: loginEnv, tty: true, stdin });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^API token for .* \(input is hidden\): /);
    assert.ok(!r.stderr.includes(daemon.token), 'the token is not echoed');
    assert.deepEqual(stdin.rawModes, [true, false]);
    const path = join(home, 'config', 'hookctl', 'config.json');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const saved = JSON.parse(readFileSync(path, 'utf8')) as { profiles: Record<string, { token: string }> };
    assert.equal(saved.profiles.default!.token, daemon.token);
  });

  it('Ctrl-C at the prompt cancels without saving (exit 2)', async () => {
    const home = tempDir('hookctl-home-');
    const stdin = fakeStdin({ tty: true });
    stdin.write('abc\u0003');
    const r = await runInProcess(['login', '--server', daemon.url], {
      env: cleanEnv({ XDG_CONFIG_HOME: join(home, 'config') }),
      tty: true,
      stdin,
    });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /login cancelled/);
    assert.deepEqual(stdin.rawModes, [true, false], 'the terminal is restored');
  });
});
