import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { STORE_FILE } from '../../src/daemon/open-store.js';
import type { Hook } from '../../src/hook/hook.js';
import type { DeliveryRecord } from '../../src/store/index.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { api, type HookdProcess, spawnHookd } from '../helpers/hookd.js';
import { createHook, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

const COUNT = 10;
/** The retry after a failed first attempt: far enough that the kill lands before it. */
const RETRY_S = 4;

interface View {
  Status: string;
  Attempts: number;
}

// The real daemon (bin/hookd.js, its own assembly and hook state) killed with SIGKILL between
// the attempts of its deliveries, then started again on the same data directory.
describe('crash (kill -9) between attempts', () => {
  it('delivers after a restart whatever was recorded before the kill', { timeout: 90_000 }, async () => {
    let phase: 'before' | 'after' = 'before';
    const failing = await startReceiver({
      reply: () => (phase === 'after' ? { status: 200 } : { status: 500 }),
    });
    const hanging = await startReceiver({ reply: () => (phase === 'after' ? { status: 200 } : 'hang') });
    const first = await spawnHookd();
    let second: HookdProcess | undefined;
    try {
      const hook = (path: string, callback: string): Promise<Hook> =>
        createHook(first, {
          PathPattern: path,
          Methods: ['GET'],
          Callback: callback,
          Persist: true,
          RetrySchedule: [0, RETRY_S, RETRY_S],
        });
      // One endpoint per failing delivery: failures at one endpoint would open its circuit.
      const fails: Hook[] = [];
      for (let i = 0; i < COUNT; i++) fails.push(await hook(`/fail/${i}/$`, `${failing.url}/fail/${i}`));
      const hang = await hook('/hang/(*)', `${hanging.url}/hang`);
      const fired = ['fail', 'hang'].flatMap((p) =>
        Array.from({ length: COUNT }, (_, i) => ({ Method: 'GET', Path: `/${p}/${i}`, StatusCode: 200 })),
      );
      const r = await api<{ fired: number }>(first.url, first.token, 'POST', '/_hookd/report', fired);
      assert.equal(r.body.fired, 2 * COUNT, r.text);
      // The daemon's own SQLite file, read beside it: the kill comes once every first attempt of
      // /fail is on disk (results are written behind the attempts) and /hang calls are in flight
      // (as many as the endpoint's concurrency limit lets out at once), left unanswered.
      const store = new SqliteStore(join(first.dataDir, STORE_FILE));
      const deliveries = new SqliteDeliveryStore(store.db);
      let leftFail: DeliveryRecord[];
      let leftHang: DeliveryRecord[];
      try {
        const failRecords = async () =>
          (await Promise.all(fails.map((h) => deliveries.listDeliveries(h.Id)))).flat();
        await until(
          'the first attempts of /fail on disk',
          failRecords,
          (l) => l.length === COUNT && l.every((d) => d.attempts === 1 && d.lastStatusCode === 500),
        );
        await until('/hang calls in flight', () => hanging.calls.length > 0);
        await first.kill();
        assert.equal((await first.exited).signal, 'SIGKILL');

        // What the killed process left behind: every delivery recorded, none finished; each /fail
        // delivery still one attempt in (the kill landed inside the retry gap: a second attempt
        // would show here), each /hang one none.
        leftFail = await failRecords();
        leftHang = await deliveries.listDeliveries(hang.Id);
        assert.equal(leftFail.length + leftHang.length, 2 * COUNT, 'every fired callback was recorded');
        assert.ok([...leftFail, ...leftHang].every((d) => d.status === 'pending'));
        assert.ok(
          leftFail.every((d) => d.attempts === 1 && d.lastStatusCode === 500),
          'one attempt each before the kill, none after',
        );
        assert.equal((await deliveries.listAttempts(leftFail[0]!.id))[0]!.statusCode, 500);
        assert.ok(
          leftHang.every((d) => d.attempts === 0),
          'attempts cut off by the kill left no record',
        );
      } finally {
        await store.close();
      }

      phase = 'after';
      second = await spawnHookd([], { dataDir: first.dataDir });
      const d2 = second;
      const views = (id: string) =>
        api<View[]>(d2.url, d2.token, 'GET', `/hooks/${id}/deliveries?limit=100`).then((x) => x.body);
      for (const h of [...fails, hang]) {
        await until(
          `the deliveries of ${h.PathPattern} after the restart`,
          () => views(h.Id),
          (l) => l.length === (h === hang ? COUNT : 1) && l.every((d) => d.Status === 'succeeded'),
          60_000,
        );
      }
      const answered = new Set(
        [...failing.calls, ...hanging.calls].filter((c) => c.answered).map((c) => c.headers['webhook-id']),
      );
      for (const d of [...leftFail, ...leftHang])
        assert.ok(answered.has(d.id), `${d.request.url} was delivered under its recorded id`);
    } finally {
      if (second) await second.stop();
      else await first.kill();
      rmSync(first.dataDir, { recursive: true, force: true });
      await failing.close();
      await hanging.close();
    }
  });
});
