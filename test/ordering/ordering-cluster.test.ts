/**
 * Ordered delivery per key on two hookd instances sharing PostgreSQL. The deliveries of
 * key A are fired alternately on both; the receiver fails A-2 once. A's deliveries must still
 * arrive one at a time in trigger order. Skipped, saying so, when PostgreSQL is not reachable.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, type Instance, startInstances } from '../cluster/cluster-helpers.js';
import { api, tempDir } from '../helpers/hookd.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { until } from '../helpers/until.js';

const skip = await pgSkipReason();

describe('ordered delivery per key on two instances sharing PostgreSQL', { skip, timeout: 120_000 }, () => {
  let tdb: TestDatabase;
  let dataDir: string;
  let server: Server;
  let url = '';
  const arrivals: { name: string; status: number; at: number }[] = [];
  let inFlight = 0;
  let maxInFlightA = 0;
  const instances: Instance[] = [];

  before(async () => {
    assertBuilt();
    tdb = await createTestDatabase();
    dataDir = tempDir('hookd-ordering-cluster-');
    let failedA2 = false;
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        body += c;
      });
      req.on('end', () => {
        if (body.startsWith('A-')) maxInFlightA = Math.max(maxInFlightA, ++inFlight);
        const fail = body === 'A-2' && !failedA2;
        if (fail) failedA2 = true;
        // Each answer takes a moment, so that a second A in flight at once would be seen.
        setTimeout(() => {
          if (body.startsWith('A-')) inFlight--;
          arrivals.push({ name: body, status: fail ? 500 : 200, at: Date.now() });
          res.writeHead(fail ? 500 : 200).end();
        }, 50);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const [a, b] = await startInstances(
      ['A', { databaseUrl: tdb.url, dataDir, leaseMs: 2000 }],
      ['B', { databaseUrl: tdb.url, dataDir, leaseMs: 2000 }],
    );
    instances.push(a!, b!);
  });

  after(async () => {
    for (const i of instances) await i.kill();
    server?.closeAllConnections();
    server?.close();
    await tdb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("A's deliveries, fired on both instances, arrive one at a time in trigger order", async () => {
    const token = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
    const [a, b] = instances as [Instance, Instance];
    const hook = await api(a.url, token, 'POST', '/hooks', {
      PathPattern: '/ord/(*)/(*)',
      Methods: ['GET'],
      Callback: `${url}/ord`,
      CallbackContent: '$1-$2',
      CallbackContentMediaType: 'text/plain',
      Ordering: { Key: '$1' },
      RetrySchedule: [0, 1.5, 1.5],
    });
    assert.equal(hook.status, 201, hook.text);
    // Every instance knows the hook before it fires (changes travel by LISTEN/NOTIFY).
    await until('the hook on B', async () => {
      const r = await api<unknown[]>(b.url, token, 'POST', '/_hookd/match', {
        Method: 'GET',
        Path: '/ord/A/0',
        StatusCode: 200,
      });
      return r.body.length === 1;
    });
    const names = ['A-1', 'A-2', 'A-3', 'A-4', 'A-5', 'A-6'];
    for (const [i, n] of names.entries()) {
      const on = i % 2 === 0 ? a : b;
      const r = await api<{ fired: number }>(on.url, token, 'POST', '/_hookd/report', [
        { Method: 'GET', Path: `/ord/${n.replace('-', '/')}`, StatusCode: 200, Phase: 'after' },
      ]);
      assert.equal(r.body.fired, 1, r.text);
    }
    await until(
      'every delivery',
      () => arrivals.filter((x) => x.status === 200).length === names.length,
      60_000,
    );
    assert.deepEqual(
      arrivals.map((x) => x.name),
      ['A-1', 'A-2', 'A-2', 'A-3', 'A-4', 'A-5', 'A-6'],
    );
    assert.equal(maxInFlightA, 1, 'never two of key A at once');
  });
});
