/**
 * The SQLite store's cost per attempt outcome: N batches of 100 outcomes (the
 * delivery's new state and its attempt record, one transaction per batch) written to a real
 * SQLite file, as the pipeline writes them. Prints the process's CPU time (user + system: SQLite
 * runs in-process) per outcome of the timed batches only, and their wall time; the deliveries
 * are inserted beforehand, untimed. CPU time is the figure to read on a loaded machine, where
 * the wall time includes waiting for a core.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/outcome-write.js [batches=200] [rounds=5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newDeliveryId } from '../src/delivery/delivery-id.js';
import type { AttemptRecord, DeliveryRecord, DeliveryState } from '../src/store/delivery-store.js';
import { emptyBatch } from '../src/store/delivery-store.js';
import { SqliteDeliveryStore } from '../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

const BATCH = 100;
const batches = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 5);

function delivery(i: number, created: number): DeliveryRecord {
  return {
    id: newDeliveryId(created),
    hookId: `hk_bench_${i % 20}`,
    owner: i % 3 === 0 ? 'bob' : 'alice',
    hookType: 1,
    status: 'pending',
    attempts: 0,
    roundStart: 0,
    created,
    nextAttempt: created,
    lastStatusCode: null,
    lastError: null,
    trigger: { method: 'POST', path: '/orders/1', statusCode: 200 },
    request: { method: 'POST', url: 'http://127.0.0.1:1/hook', headers: {}, body: '{"order":1}' },
  };
}

async function round(): Promise<{ cpu: number; wall: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'hookd-outcome-bench-'));
  const sqlite = new SqliteStore(join(dir, 'hookd.db'));
  try {
    const store = new SqliteDeliveryStore(sqlite.db);
    const t0 = Date.now();
    const all: DeliveryRecord[] = [];
    for (let b = 0; b < batches; b++) {
      const inserts = Array.from({ length: BATCH }, (_, i) => delivery(b * BATCH + i, t0 + b));
      await store.write({ ...emptyBatch(), inserts });
      all.push(...inserts);
    }
    let ns = 0n;
    let cpu = 0;
    for (let b = 0; b < batches; b++) {
      const updates: DeliveryState[] = [];
      const attempts: AttemptRecord[] = [];
      for (let i = 0; i < BATCH; i++) {
        const d = all[b * BATCH + i]!;
        // Mostly successes, some failures that retry, a few give-ups: the rollups see every kind.
        const ok = i % 10 < 8;
        const gaveUp = i % 10 === 9;
        updates.push({
          id: d.id,
          status: ok ? 'succeeded' : gaveUp ? 'failed' : 'pending',
          attempts: 1,
          roundStart: 0,
          nextAttempt: ok || gaveUp ? null : d.created + 1000,
          lastStatusCode: ok ? 200 : 500,
          lastError: null,
        });
        attempts.push({
          deliveryId: d.id,
          hookId: d.hookId,
          attempt: 1,
          time: d.created + 5,
          statusCode: ok ? 200 : 500,
          latencyMs: 1 + (i % 7),
          error: null,
          responseBody: null,
        });
      }
      const start = process.hrtime.bigint();
      const used = process.cpuUsage();
      await store.write({ ...emptyBatch(), updates, attempts });
      const spent = process.cpuUsage(used);
      ns += process.hrtime.bigint() - start;
      cpu += spent.user + spent.system;
    }
    return { cpu: cpu / (batches * BATCH), wall: Number(ns) / 1000 / (batches * BATCH) };
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const figures: { cpu: number; wall: number }[] = [];
for (let r = 0; r < rounds; r++) figures.push(await round());
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cpu = figures.map((f) => f.cpu);
const wall = figures.map((f) => f.wall);
console.log(
  `outcome write, SQLite, ${batches} batches of ${BATCH}, µs per outcome: ` +
    `CPU ${cpu.map((f) => f.toFixed(2)).join(' ')} (median ${median(cpu).toFixed(2)}); ` +
    `wall ${wall.map((f) => f.toFixed(2)).join(' ')} (median ${median(wall).toFixed(2)})`,
);
