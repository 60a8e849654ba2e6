import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { api, firedByReport, startHookd, type TestDaemon } from '../helpers/hookd.js';

/** bin/hookd.js, found from this file under tsx and compiled alike (see lifecycle.test.ts). */
function hookdBin(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above the test file');
    dir = up;
  }
  return join(dir, 'bin', 'hookd.js');
}
const BIN = hookdBin();

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const TOKEN = /^hkd_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;
const ok = { PathPattern: '/a', Callback: 'http://127.0.0.1:9/hook', Methods: ['GET'] };

/**
 * The admin commands run as separate processes against the data dir of a daemon that keeps
 * running, the way an operator uses them: what they write must take effect without a restart.
 */
describe('hookd user and token commands', () => {
  let d: TestDaemon;
  const run = (...args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [BIN, ...args, '--data-dir', d.dataDir],
        { env: { ...process.env, HOOKD_LOG_LEVEL: 'warn' }, timeout: 20000 },
        (error, stdout, stderr) => {
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
        },
      );
    });

  const firedFor = (path: string): Promise<number> => firedByReport(d.url, d.token, path);

  let bobToken = '';
  let bobTokenId = '';
  let bobHook = '';

  before(async () => {
    d = await startHookd();
  });
  after(async () => {
    await d.close();
  });

  it('user add creates a user and says how to give it a token', async () => {
    const r = await run('user', 'add', 'bob', '--scope', '/');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /added user bob/);
    assert.match(r.stdout, /hookd token create bob/);
  });

  it('user list shows every user with its creation time', async () => {
    const r = await run('user', 'list');
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    assert.deepEqual(
      rows.map((x) => x[0]),
      ['admin', 'bob'],
    );
    for (const row of rows) assert.match(row[1] ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
  });

  it('token create prints only the token on stdout (scriptable), its id on stderr', async () => {
    const r = await run('token', 'create', 'bob', '--label', 'ci runner');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.endsWith('\n'), true);
    bobToken = r.stdout.trim();
    const m = TOKEN.exec(bobToken);
    assert.ok(m, r.stdout);
    bobTokenId = m[1]!;
    assert.match(r.stderr, new RegExp(`created token ${bobTokenId} for bob`));
    assert.equal(r.stderr.includes(bobToken), false);
  });

  it('the new token works against the running daemon at once, as bob', async () => {
    const list = await api(d.url, bobToken, 'GET', '/hooks');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body, []);
    const made = await api<{ Id: string; Owner: string }>(d.url, bobToken, 'POST', '/hooks', ok);
    assert.equal(made.status, 201, made.text);
    assert.equal(made.body.Owner, 'bob');
    bobHook = made.body.Id;
    assert.equal((await api(d.url, d.token, 'GET', `/hooks/${bobHook}`)).status, 404);
  });

  it('token list shows ids, users and labels, never a secret', async () => {
    const r = await run('token', 'list');
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    const bob = rows.find((x) => x[0] === bobTokenId);
    assert.ok(bob, r.stdout);
    assert.equal(bob[1], 'bob');
    assert.equal(bob[3], 'ci runner');
    assert.ok(rows.some((x) => x[1] === 'admin'));
    assert.equal(r.stdout.includes(bobToken.slice(17)), false);
    assert.equal(r.stdout.includes(d.token.slice(17)), false);

    const only = await run('token', 'list', 'bob');
    assert.deepEqual(
      only.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[0]),
      [bobTokenId],
    );
  });

  it('token revoke takes effect on the running daemon: 401 from then on', async () => {
    const spare = (await run('token', 'create', 'bob')).stdout.trim();
    const r = await run('token', 'revoke', bobTokenId);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`revoked token ${bobTokenId}`));
    const refused = await api<{ code: string }>(d.url, bobToken, 'GET', '/hooks');
    assert.equal(refused.status, 401);
    assert.equal(refused.body.code, 'UNAUTHENTICATED');
    // Bob's other token, and bob's hook, are untouched.
    assert.equal((await api(d.url, spare, 'GET', `/hooks/${bobHook}`)).status, 200);
    const listed = await run('token', 'list', 'bob');
    assert.equal(listed.stdout.includes(bobTokenId), false);
  });

  it('token revoke of an unknown id fails with exit code 1, naming it', async () => {
    const r = await run('token', 'revoke', 'ffffffffffff');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /ffffffffffff/);
  });

  it('refuses a duplicate user (1), an invalid name (2), a token for nobody (1)', async () => {
    const dup = await run('user', 'add', 'bob');
    assert.equal(dup.code, 1);
    assert.match(dup.stderr, /already exists/);
    const bad = await run('user', 'add', '1-bad name');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /invalid/);
    const ghost = await run('token', 'create', 'ghost');
    assert.equal(ghost.code, 1);
    assert.match(ghost.stderr, /hookd user add ghost/);
    for (const x of [dup, bad, ghost]) assert.equal(/\n\s+at /.test(x.stderr), false, x.stderr);
  });

  let firedBeforeRemoval = -1;
  it('user remove deletes the user with its tokens and hooks; its tokens get 401', async () => {
    const token = (await run('token', 'create', 'bob')).stdout.trim();
    assert.equal((await api(d.url, token, 'GET', '/hooks')).status, 200);
    firedBeforeRemoval = await firedFor('/a');
    const r = await run('user', 'remove', 'bob');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /removed user bob/);
    assert.equal((await api(d.url, token, 'GET', '/hooks')).status, 401);
    assert.equal(await d.hookd.store.getHook(bobHook), undefined);
    const users = await run('user', 'list');
    assert.equal(users.stdout.includes('bob'), false);
    const tokens = await run('token', 'list', 'bob');
    assert.equal(tokens.stdout, '');
    // The admin is untouched.
    assert.equal((await api(d.url, d.token, 'GET', '/hooks')).status, 200);
  });

  it("the running daemon stops firing a removed user's hooks", async () => {
    assert.equal(firedBeforeRemoval, 1, "the precondition: bob's hook fired before the removal");
    // The daemon notices another process's commit within about a second (it polls data_version).
    let fired = await firedFor('/a');
    for (let i = 0; i < 30 && fired !== 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      fired = await firedFor('/a');
    }
    assert.equal(fired, 0);
  });

  it('user remove of an unknown user fails with exit code 1', async () => {
    const r = await run('user', 'remove', 'nobody');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no user "nobody"/);
  });
});
