/**
 * Isolation per endpoint, protection per host: one receiver host serves 100 healthy
 * endpoint paths, one path that never answers and one that answers 500 every time, through the
 * delivery pipeline. `runIsolation` is one run (test/delivery/isolation.test.ts checks what every
 * run must show); run as a script, this compares the healthy endpoints' fire→receive p99 with and
 * without the two bad paths, in ABBA order after a warm-up, and prints the ratio (target ±20 %,
 * docs/BENCHMARKS.md). A latency ratio is a measurement, not a test: it lives here.
 *
 *   node dist/bench/isolation.js
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeliveryPipeline } from '../src/delivery/pipeline.js';
import { samePlanForAll } from '../src/delivery/plan/index.js';
import type { FiredEvent } from '../src/engine/fired-event.js';
import { AddressPolicy } from '../src/policy/address-policy.js';
import { MemoryDeliveryStore } from '../src/store/memory/memory-delivery-store.js';
import { startReceiver } from '../test/helpers/servers.js';

export const HEALTHY = 100;
export const ROUNDS = 20;
const ROUND_GAP_MS = 100;
const LOOPBACK = new AddressPolicy(['127.0.0.0/8']);

export interface IsolationRun {
  p50: number;
  p99: number;
  arrived: number;
  hangOutstandingMax: number;
  failCalls: number;
  heldBack: Record<string, number>;
  /**
   * Healthy callbacks that had arrived when the hanging endpoint's first attempt ended (its
   * attempt limit ran out); undefined without the bad endpoints.
   */
  arrivedWhenHangEnded: number | undefined;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function runIsolation(withBad: boolean): Promise<IsolationRun> {
  const latencies: number[] = [];
  let hangOutstandingMax = 0;
  let failCalls = 0;
  const r = await startReceiver({
    reply: (call) => {
      if (call.url === '/hang') return 'hang';
      if (call.url === '/fail') {
        failCalls++;
        return { status: 500 };
      }
      const firedAt = Number(JSON.parse(call.body).t);
      latencies.push(performance.now() - firedAt);
      return { status: 200 };
    },
  });
  const pipeline = new DeliveryPipeline({
    stores: { durable: new MemoryDeliveryStore(), ephemeral: new MemoryDeliveryStore() },
    send: { policy: LOOPBACK },
    // Defaults for the limits (256 / 32 per host / 8 per endpoint) and the 15 s attempt limit.
    schedule: { delaysMs: [0, 1000, 2000], jitter: 0 },
    plans: samePlanForAll(),
  });
  let arrivedWhenHangEnded: number | undefined;
  pipeline.events.on('attempt', (m) => {
    if (m.HookId === 'hk_hang' && arrivedWhenHangEnded === undefined) arrivedWhenHangEnded = latencies.length;
  });
  await pipeline.start();
  const event = (hookId: string, url: string): FiredEvent => ({
    hookId,
    owner: 'alice',
    hookType: 1,
    persist: true,
    firedAt: new Date().toISOString(),
    trigger: { method: 'GET', path: '/x', statusCode: 200 },
    request: {
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ t: performance.now() }),
    },
  });
  // Until the hanging endpoint's first attempt runs out: after it, the receiver still counts that
  // request while the retries go out.
  const watch = setInterval(() => {
    if (arrivedWhenHangEnded === undefined)
      hangOutstandingMax = Math.max(hangOutstandingMax, r.outstanding());
  }, 5);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const events: FiredEvent[] = [];
      // The bad ones first in every round: the worst order for the healthy ones.
      if (withBad) {
        events.push(event('hk_hang', `${r.url}/hang`));
        events.push(event('hk_fail', `${r.url}/fail`));
      }
      for (let i = 0; i < HEALTHY; i++) events.push(event(`hk_ok${i}`, `${r.url}/ok/${i}`));
      pipeline.accept(events);
      await new Promise((resolve) => setTimeout(resolve, ROUND_GAP_MS));
    }
    const deadline = Date.now() + 30_000;
    while (latencies.length < HEALTHY * ROUNDS && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    // With the bad endpoints, until the hanging endpoint's first attempt has run out (15 s).
    while (withBad && arrivedWhenHangEnded === undefined && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      arrived: latencies.length,
      hangOutstandingMax,
      failCalls,
      heldBack: { ...pipeline.stats().heldBack },
      arrivedWhenHangEnded,
    };
  } finally {
    clearInterval(watch);
    await pipeline.close(0);
    await r.close();
  }
}

/** Warm-up, then ABBA: neither kind of run profits from coming later. */
export async function measureIsolation(): Promise<{ base: number; bad: number; ratio: number }> {
  await runIsolation(false);
  const b1 = await runIsolation(false);
  const x1 = await runIsolation(true);
  const x2 = await runIsolation(true);
  const b2 = await runIsolation(false);
  const base = (b1.p99 + b2.p99) / 2;
  const bad = (x1.p99 + x2.p99) / 2;
  return { base, bad, ratio: bad / base };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const r = await measureIsolation();
  console.log(
    `healthy fire→receive p99: ${r.bad.toFixed(1)} ms with the bad endpoints, ${r.base.toFixed(1)} ms without; ratio ${r.ratio.toFixed(2)}`,
  );
}
