/**
 * `hookd user|token …` with `--database-url`: they work on the shared database, and the running
 * instances follow what they change at once (no restart, no file watching).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { api, firedByReport, HOOKD_BIN, tempDir } from '../helpers/hookd.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { until } from '../helpers/until.js';
import { assertBuilt, type Instance, startInstance } from './cluster-helpers.js';

const skip = await pgSkipReason();

describe('hookd user and token commands on PostgreSQL', { skip, timeout: 180_000 }, () => {
  let tdb: TestDatabase;
  let dataDir: string;
  let inst: Instance;
  let admin: string;
  const run = (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [HOOKD_BIN, ...args, '--data-dir', tempDir('hookd-admin-'), '--database-url', tdb.url],
        { timeout: 60_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });
  const fired = (path: string): Promise<number> => firedByReport(inst.url, admin, path);

  before(async () => {
    assertBuilt();
    tdb = await createTestDatabase();
    dataDir = tempDir('hookd-cluster-admin-');
    inst = await startInstance('A', { databaseUrl: tdb.url, dataDir });
    admin = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
  });
  after(async () => {
    await inst?.kill();
    await tdb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('user add and token create write the shared database; the running instance accepts the token', async () => {
    const add = await run('user', 'add', 'bob', '--scope', '/bob');
    assert.equal(add.code, 0, add.stderr);
    const created = await run('token', 'create', 'bob');
    assert.equal(created.code, 0, created.stderr);
    const token = created.stdout.trim();
    const list = await run('user', 'list');
    assert.match(list.stdout, /^admin\t/m);
    assert.match(list.stdout, /^bob\t/m);
    const hook = await api<{ Id: string }>(inst.url, token, 'POST', '/hooks', {
      PathPattern: '/bob/(*)',
      Callback: 'http://127.0.0.1:9/bob',
      Methods: ['GET'],
    });
    assert.equal(hook.status, 201, hook.text);
    assert.equal(await fired('/bob/1'), 1);

    // Removing the user from another process removes its hooks from the running index.
    const removed = await run('user', 'remove', 'bob');
    assert.equal(removed.code, 0, removed.stderr);
    // By NOTIFY from the other process: the instance never polls the table.
    await until('the instance drops bob’s hook', async () => (await fired('/bob/1')) === 0, 30_000);
    assert.equal((await api(inst.url, token, 'GET', '/hooks')).status, 401, "bob's token went with bob");
  });

  it('a bad database URL is reported without its password, exit 1', async () => {
    const r = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [HOOKD_BIN, 'user', 'list', '--database-url', 'postgres://hookd:s3cr3t@127.0.0.1:1/nope'],
        { timeout: 60_000 },
        (error, _stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stderr }),
      );
    });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /cannot use the PostgreSQL database postgres:\/\/hookd:\*\*\*@127\.0\.0\.1:1\/nope/,
    );
    assert.ok(!r.stderr.includes('s3cr3t'), r.stderr);
  });
});
