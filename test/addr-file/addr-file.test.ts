import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ADDR_FILE, readLiveAddress, removeAddrFile, writeAddrFile } from '../../src/addr-file/index.js';
import { api, HOOKD_BIN, type HookdProcess, spawnHookd, tempDir } from '../helpers/hookd.js';
import { closedPort } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// A running hookd on SQLite writes its API address to <data-dir>/hookd.addr and removes it when
// it stops cleanly; `hookd user …` and `hookd token …` use that daemon's API with the admin
// token, and write the store directly only when no daemon runs (no file, or a stale one).

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}
const run = (dataDir: string, ...args: string[]): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [HOOKD_BIN, ...args, '--data-dir', dataDir],
      { env: { ...process.env, HOOKD_LOG_LEVEL: 'warn' }, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });

/** The daemon's log records with this message. */
const logged = (d: HookdProcess, msg: string) =>
  d.lines.filter((l) => {
    try {
      return (JSON.parse(l) as { msg?: string }).msg === msg;
    } catch {
      return false;
    }
  });

describe('hookd.addr: the running daemon, found by its data dir', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('is written while hookd runs, used by hookd user/token, and removed on a clean stop', async () => {
    const d = await spawnHookd();
    dirs.push(d.dataDir);
    try {
      const file = join(d.dataDir, ADDR_FILE);
      const addr = JSON.parse(readFileSync(file, 'utf8')) as { url: string; pid: number };
      assert.deepEqual(addr, { url: d.url, pid: d.proc.pid });

      const added = await run(d.dataDir, 'user', 'add', 'bob', '--scope', '/bob/*');
      assert.equal(added.code, 0, added.stderr);
      assert.match(added.stdout, /^added user bob \(scopes: \/bob\/\*\)/);
      // The daemon made the change itself: its own API logged it.
      await until('the daemon logged the user', () => logged(d, 'user added').length === 1);

      const made = await run(d.dataDir, 'token', 'create', 'bob', '--label', 'ci');
      assert.equal(made.code, 0, made.stderr);
      const token = made.stdout.trim();
      await until('the daemon logged the token', () => logged(d, 'token created').length === 1);
      // Usable at once: the daemon made it.
      const me = await api<{ Name: string }>(d.url, token, 'GET', '/_hookd/users/bob');
      assert.equal(me.status, 200, me.text);

      const users = await run(d.dataDir, 'user', 'list');
      assert.match(users.stdout, /^bob\t\S+\t\/bob\/\*$/m);
      const tokens = await run(d.dataDir, 'token', 'list', 'bob');
      const id = /^(\S+)\tbob\t\S+\tci$/m.exec(tokens.stdout)?.[1];
      assert.ok(id, tokens.stdout);
      const revoked = await run(d.dataDir, 'token', 'revoke', id);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.equal((await api(d.url, token, 'GET', '/_hookd/users/bob')).status, 401);
      const missing = await run(d.dataDir, 'user', 'remove', 'carol');
      assert.notEqual(missing.code, 0);
      assert.match(missing.stderr, /carol/);
      const removed = await run(d.dataDir, 'user', 'remove', 'bob');
      assert.equal(removed.code, 0, removed.stderr);
      await until('the daemon logged the removal', () => logged(d, 'user removed').length === 1);

      assert.equal(await d.stop(), 0);
      assert.equal(existsSync(file), false, 'removed on a clean stop');
    } finally {
      if (d.proc.exitCode === null) await d.kill();
    }
  });

  it('a stale file (a dead pid, or an address that does not answer) is not a running daemon', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const first = await run(dir, 'user', 'list', '--init');
    assert.equal(first.code, 0, first.stderr);
    const dead = `http://127.0.0.1:${await closedPort()}`;
    // A pid that is not alive.
    writeFileSync(join(dir, ADDR_FILE), JSON.stringify({ url: dead, pid: 2 ** 22 + 1 }));
    assert.equal(await readLiveAddress(dir), undefined);
    const added = await run(dir, 'user', 'add', 'dave');
    assert.equal(added.code, 0, added.stderr);
    // A live pid (this test's) whose address does not answer.
    writeAddrFile(dir, dead);
    assert.equal(await readLiveAddress(dir, 500), undefined);
    const listed = await run(dir, 'user', 'list');
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^dave\t/m);
    // Only the process that wrote the file removes it.
    removeAddrFile(dir, process.pid + 1);
    assert.equal(existsSync(join(dir, ADDR_FILE)), true);
    removeAddrFile(dir);
    assert.equal(existsSync(join(dir, ADDR_FILE)), false);
  });
});
