/**
 * Idempotent reports across a cluster: two real hookd processes on one PostgreSQL database. The
 * same report sent 5 times with one key, alternately to each instance, fires once; duplicates
 * sent to both at the same moment fire once; another body with the key is 422 on either.
 * Skipped, saying so, when PostgreSQL is not reachable (HOOKD_TEST_DATABASE_URL).
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { api, tempDir } from '../helpers/hookd.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { firedCalls, fireMark, type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { assertBuilt, type Instance, startInstances } from './cluster-helpers.js';

const skip = await pgSkipReason();
const REPORT = '/_hookd/report';

describe('cluster: Idempotency-Key on two hookd instances', { skip, timeout: 90_000 }, () => {
  let tdb: TestDatabase;
  let dataDir: string;
  let receiver: Receiver;
  let token: string;
  let a: Instance;
  let b: Instance;

  before(async () => {
    assertBuilt();
    tdb = await createTestDatabase();
    dataDir = tempDir('hookd-idem-cluster-');
    receiver = await startReceiver();
    [a, b] = await startInstances(
      ['A', { databaseUrl: tdb.url, dataDir }],
      ['B', { databaseUrl: tdb.url, dataDir }],
    );
    token = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
    const r = await api(a.url, token, 'POST', '/hooks', {
      PathPattern: '/orders/(*)',
      Methods: ['POST'],
      Callback: `${receiver.url}/cb`,
    });
    assert.equal(r.status, 201, r.text);
    // B learns of the hook through the database's notifications.
    await until('B has the hook', async () => {
      const m = await api<unknown[]>(b.url, token, 'POST', '/_hookd/match', {
        Method: 'POST',
        Path: '/orders/x',
        StatusCode: 200,
      });
      return m.body.length === 1;
    });
  });

  after(async () => {
    await a?.kill();
    await b?.kill();
    await receiver?.close();
    await tdb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('the same report sent 5 times with one key, to either instance, fires once', async () => {
    const served = { Method: 'POST', Path: '/orders/1', StatusCode: 201 };
    const mark = await fireMark([a.opsUrl, b.opsUrl], receiver);
    const answers = [];
    for (const inst of [a, b, a, b, b]) {
      answers.push(await api(inst.url, token, 'POST', REPORT, served, { 'Idempotency-Key': 'k-1' }));
    }
    for (const r of answers) {
      assert.equal(r.status, 202, r.text);
      assert.equal(r.text, answers[0]!.text);
    }
    assert.equal(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true').length, 4);
    await receiver.waitFor(1, 10_000);
    assert.equal((await firedCalls([a.opsUrl, b.opsUrl], receiver, mark)).length, 1);
    const keys = await tdb.query('SELECT owner, key FROM idempotency_keys');
    assert.deepEqual(keys.rows, [{ owner: 'admin', key: 'k-1' }]);
  });

  it('duplicates sent to both instances at once fire once', async () => {
    receiver.reset();
    const mark = await fireMark([a.opsUrl, b.opsUrl], receiver);
    const served = { Method: 'POST', Path: '/orders/2', StatusCode: 201 };
    const all = await Promise.all(
      [a, b, a, b, a, b].map((inst) =>
        api(inst.url, token, 'POST', REPORT, served, { 'Idempotency-Key': 'k-2' }),
      ),
    );
    // Each one either ran, replayed the answer, or (if it waited too long) was told 409.
    for (const r of all) assert.ok(r.status === 202 || r.status === 409, r.text);
    assert.equal(
      all.filter((r) => r.status === 202 && r.headers.get('idempotent-replayed') === null).length,
      1,
    );
    await receiver.waitFor(1, 10_000);
    assert.equal((await firedCalls([a.opsUrl, b.opsUrl], receiver, mark)).length, 1);
  });

  it('another body with a used key is 422 on the other instance', async () => {
    const r = await api<{ code: string }>(
      b.url,
      token,
      'POST',
      REPORT,
      { Method: 'POST', Path: '/orders/3' },
      {
        'Idempotency-Key': 'k-1',
      },
    );
    assert.equal(r.status, 422, r.text);
    assert.equal(r.body.code, 'IDEMPOTENCY_KEY_REUSED');
  });
});
