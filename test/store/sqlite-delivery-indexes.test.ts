import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { DeliveryQuery } from '../../src/store/delivery-store.js';
import { emptyBatch } from '../../src/store/delivery-store.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { record } from './delivery-store-contract.js';

const root = mkdtempSync(join(tmpdir(), 'hookd-sqlite-indexes-'));
after(() => rmSync(root, { recursive: true, force: true }));

/**
 * The delivery log's filters read index ranges: the status index holds the deliveries that did
 * not succeed, the receiver-status index those whose receiver status is not a 2xx, and a query names
 * what lets the planner use them. The plans are SQLite's own, for the statements the store prepares.
 */
describe('SQLite delivery log: each filter on its index', () => {
  it('each filter is a range of an index, never a scan of the table', async () => {
    const sqlite = new SqliteStore(join(root, 'plans.db'));
    try {
      const prepared: string[] = [];
      const prepare = sqlite.db.prepare.bind(sqlite.db);
      const store = new SqliteDeliveryStore(sqlite.db);
      const t0 = Date.now();
      const ds = Array.from({ length: 30 }, (_, i) =>
        record('hk_plans', t0 + i, {
          ...(i % 3 === 0 && { status: 'succeeded' as const, lastStatusCode: 200, nextAttempt: null }),
          ...(i % 3 === 1 && { status: 'failed' as const, lastStatusCode: 503, nextAttempt: null }),
        }),
      );
      await store.write({ ...emptyBatch(), inserts: ds });
      sqlite.db.prepare = ((sql: string) => {
        prepared.push(sql);
        return prepare(sql);
      }) as typeof sqlite.db.prepare;
      const plan = async (query: DeliveryQuery): Promise<{ plan: string; ids: string[] }> => {
        prepared.length = 0;
        const rows = await store.listDeliveries('hk_plans', query);
        const sql = prepared.find((s) => s.startsWith('SELECT'));
        assert.ok(sql, 'each filter set is prepared on its first use');
        const params: Record<string, unknown> = { limit: query.limit ?? -1, p1: 'hk_plans', p2: '~' };
        // In the order delivery-list-filter.ts numbers them.
        const values = [query.status, query.since, ...(query.receiverStatus ?? [])].filter(
          (v) => v !== undefined,
        );
        values.forEach((v, i) => {
          params[`p${i + 3}`] = v;
        });
        const lines = prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[];
        return { plan: lines.map((l) => l.detail).join('; '), ids: rows.map((r) => r.id) };
      };
      const ids = (pick: (i: number) => boolean) =>
        ds
          .filter((_d, i) => pick(i))
          .map((d) => d.id)
          .reverse();

      const failed = await plan({ status: 'failed' });
      assert.match(
        failed.plan,
        /USING (COVERING )?INDEX deliveries_by_hook_status \(hook_id=\? AND status=\?/,
      );
      assert.deepEqual(
        failed.ids,
        ids((i) => i % 3 === 1),
      );
      // Most deliveries succeed: the newest of the hook, read in order, are the page.
      const succeeded = await plan({ status: 'succeeded', since: t0, limit: 2 });
      assert.match(succeeded.plan, /INDEX deliveries_by_hook \(hook_id=\? AND id<\?\)/);
      assert.deepEqual(succeeded.ids, ids((i) => i % 3 === 0).slice(0, 2));
      // Another filter set than the failed one's, so that its statement is prepared here too.
      const pending = await plan({ status: 'pending', since: t0 });
      assert.match(pending.plan, /INDEX deliveries_by_hook_status \(hook_id=\? AND status=\?/);
      assert.deepEqual(
        pending.ids,
        ids((i) => i % 3 === 2),
      );
      const fiveHundreds = await plan({ receiverStatus: [500, 599] });
      assert.match(
        fiveHundreds.plan,
        /INDEX deliveries_by_hook_last_status \(hook_id=\? AND last_status>\? AND last_status<\?\)/,
      );
      assert.deepEqual(
        fiveHundreds.ids,
        ids((i) => i % 3 === 1),
      );
      const one = await plan({ receiverStatus: [503, 503] });
      assert.match(one.plan, /INDEX deliveries_by_hook_last_status \(hook_id=\? AND last_status=\?/);
      assert.deepEqual(
        one.ids,
        ids((i) => i % 3 === 1),
      );
      // 2xx is left out of the receiver-status index: most deliveries' last status, so a success
      // writes no entry there, and the newest of the hook, read in order, are the page.
      const ok = await plan({ receiverStatus: [200, 299] });
      assert.match(ok.plan, /INDEX deliveries_by_hook \(hook_id=\? AND id<\?\)/);
      assert.deepEqual(
        ok.ids,
        ids((i) => i % 3 === 0),
      );
      const twoHundred = await plan({ receiverStatus: [200, 200], since: t0 });
      assert.match(twoHundred.plan, /INDEX deliveries_by_hook \(hook_id=\? AND id<\?\)/);
      assert.deepEqual(
        twoHundred.ids,
        ids((i) => i % 3 === 0),
      );
      // A range across 2xx holds successes too: read in order, with every row of it found.
      const any = await plan({ receiverStatus: [100, 599], since: t0, status: 'failed' });
      assert.deepEqual(
        any.ids,
        ids((i) => i % 3 === 1),
      );
      const entries = sqlite.db
        .prepare(
          "SELECT count(*) AS n FROM deliveries INDEXED BY deliveries_by_hook_last_status WHERE hook_id = 'hk_plans' AND last_status NOT BETWEEN 200 AND 299",
        )
        .get() as { n: number };
      assert.equal(entries.n, 10, 'only the 503s are in the receiver-status index');
      for (const p of [failed, succeeded, pending, fiveHundreds, one, ok, twoHundred, any])
        assert.doesNotMatch(p.plan, /SCAN deliveries(?! USING)/);
    } finally {
      await sqlite.close();
    }
  });
});
