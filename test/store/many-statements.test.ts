/**
 * The statement-cache probe: a process preparing 200,000 statements, each dropped at once so that the
 * collector finalizes them while the process runs and as it exits. better-sqlite3 12 aborted
 * there on Node 24.19+ (`Assertion failed: (env) != nullptr` in a Statement's destructor during
 * GC, exit 134, nodejs/node#65446); the test runs it on the Node that runs the suite (a supported
 * one: CI runs it on 24 and 26) in a child process, so an abort is a failed test, not a dead run.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

const PROBE = `
const Database = require(process.env.BETTER_SQLITE3);
const db = new Database(':memory:');
db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
let rows = 0;
for (let i = 0; i < 200000; i++) {
  const s = db.prepare('SELECT v FROM t WHERE id = ' + i);
  if (s.get() !== undefined) rows++;
}
console.log('prepared 200000, rows ' + rows);
`;

describe('SQLite driver on this Node', () => {
  it('a process preparing 200,000 statements runs and exits cleanly (no abort in GC)', () => {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const r = spawnSync(process.execPath, ['-e', PROBE], {
      env: { ...process.env, BETTER_SQLITE3: driver },
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.equal(r.signal, null, `killed by ${r.signal}: ${r.stderr}`);
    assert.equal(r.status, 0, `exit ${r.status} on Node ${process.version}: ${r.stderr}`);
    assert.match(r.stdout, /prepared 200000, rows 0/);
  });
});
