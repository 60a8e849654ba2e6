import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sameHook } from '../../src/hook/index.js';
import { api, startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { until } from '../helpers/until.js';

// Asked before any suite is declared: a top-level await between suites can let the runner
// finish the file before the suites after it are declared, so they would never run.
const skip = await pgSkipReason();

// On a shared PostgreSQL database an instance's own hook change comes back to it as a
// notification: it applies the change once, whichever of the two arrives first.

/** hookd_hook_changes_total by `source,result`, e.g. `here,applied`. */
async function changes(d: TestDaemon): Promise<Map<string, number>> {
  const text = await (await fetch(`${d.opsUrl}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^hookd_hook_changes_total\{source="(\w+)",result="(\w+)"\} (\d+)/.exec(line);
    if (m) out.set(`${m[1]},${m[2]}`, Number(m[3]));
  }
  return out;
}

const applied = (c: Map<string, number>) => (c.get('here,applied') ?? 0) + (c.get('database,applied') ?? 0);
const current = (c: Map<string, number>) => (c.get('here,current') ?? 0) + (c.get('database,current') ?? 0);
const seen = (c: Map<string, number>) => [...c.values()].reduce((a, b) => a + b, 0);

describe('sameHook', () => {
  it('compares field for field, whatever the key order; undefined is absent', () => {
    const a = { Id: 'hk_1', Methods: ['GET'], Headers: { A: '1' }, Name: undefined };
    assert.equal(sameHook(a, { Headers: { A: '1' }, Methods: ['GET'], Id: 'hk_1' }), true);
    assert.equal(sameHook(a, { Id: 'hk_1', Methods: ['GET', 'PUT'], Headers: { A: '1' } }), false);
    assert.equal(sameHook(a, { Id: 'hk_1', Methods: ['GET'], Headers: { A: '2' } }), false);
    assert.equal(sameHook(a, { Id: 'hk_1', Methods: ['GET'], Headers: { A: '1' }, Name: 'x' }), false);
  });
});

describe('hook changes on a shared PostgreSQL database', { skip, timeout: 60_000 }, () => {
  let tdb: TestDatabase;
  let dataDir: string;
  let a: TestDaemon;
  let b: TestDaemon;

  before(async () => {
    tdb = await createTestDatabase();
    dataDir = tempDir('hookd-following-');
    a = await startHookd({ databaseUrl: tdb.url }, { dataDir });
    b = await startHookd({ databaseUrl: tdb.url }, { dataDir });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await tdb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('each instance applies a change once: the one that made it, and the other', async () => {
    const [a0, b0] = [await changes(a), await changes(b)];
    const created = await api<{ Id: string }>(a.url, a.token, 'POST', '/hooks', {
      PathPattern: '/following/(*)',
      Methods: ['GET'],
      Callback: 'http://127.0.0.1:9/h',
    });
    assert.equal(created.status, 201);
    // Both announcements have been handled once A has seen two offers (its own and the echo)
    // and B one.
    const a1 = await until(
      'A saw its change and its echo',
      () => changes(a),
      (c) => seen(c) - seen(a0) >= 2,
    );
    const b1 = await until(
      'B saw the change',
      () => changes(b),
      (c) => seen(c) - seen(b0) >= 1,
    );
    assert.equal(applied(a1) - applied(a0), 1, `A applied it once: ${JSON.stringify([...a1])}`);
    // Which of the two comes first is the database's and the scheduler's choice (the committing
    // backend may answer after the listening one has passed the change on): the other finds the
    // version current.
    assert.equal(
      current(a1) - current(a0),
      1,
      `the second offer found it current: ${JSON.stringify([...a1])}`,
    );
    assert.equal(applied(b1) - applied(b0), 1, 'B applied it once');

    // A replace made at B: the same the other way round, and A's index has the new version.
    const replaced = await api(b.url, b.token, 'PUT', `/hooks/${created.body.Id}`, {
      PathPattern: '/following/(*)/x',
      Methods: ['GET'],
      Callback: 'http://127.0.0.1:9/h',
    });
    assert.equal(replaced.status, 200);
    const b2 = await until(
      'B saw its change and its echo',
      () => changes(b),
      (c) => seen(c) - seen(b1) >= 2,
    );
    const a2 = await until(
      'A saw the change',
      () => changes(a),
      (c) => seen(c) - seen(a1) >= 1,
    );
    assert.equal(applied(b2) - applied(b1), 1, 'B applied its replace once');
    assert.equal(current(b2) - current(b1), 1, 'the second offer at B found it current');
    assert.equal(applied(a2) - applied(a1), 1, 'A applied it once');
    const m = await api<{ HookId?: string; Id?: string }[]>(a.url, a.token, 'POST', '/_hookd/match', {
      Method: 'GET',
      Path: '/following/1/x',
      StatusCode: 200,
    });
    assert.equal(m.status, 200);
    assert.equal(m.body.length, 1, `A matches the replaced pattern: ${m.text}`);
  });
});
