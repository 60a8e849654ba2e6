import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeliveryPipeline } from '../../src/delivery/pipeline.js';
import type { FiredEvent } from '../../src/engine/fired-event.js';
import { AddressPolicy } from '../../src/policy/address-policy.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import { startReceiver } from '../helpers/servers.js';

// Isolation per endpoint, protection per host (issue 13): one receiver host serves 100 healthy
// endpoint paths, one path that never answers and one that answers 500 every time. The healthy
// endpoints' callbacks all arrive, and their fire→receive p99 is compared with a run without the
// two bad paths. The ratio is printed (target ±20 %, docs/BENCHMARKS.md); the assertion is
// generous because this machine is shared.
const HEALTHY = 100;
const ROUNDS = 20;
const ROUND_GAP_MS = 100;
const LOOPBACK = new AddressPolicy(['127.0.0.0/8']);

interface Run {
  p50: number;
  p99: number;
  arrived: number;
  hangOutstandingMax: number;
  failCalls: number;
  heldBack: Record<string, number>;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function run(withBad: boolean): Promise<Run> {
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
    durable: new MemoryDeliveryStore(),
    ephemeral: new MemoryDeliveryStore(),
    policy: LOOPBACK,
    // Defaults for the limits (256 / 32 per host / 8 per endpoint) and the 15 s attempt limit.
    schedule: { delaysMs: [0, 1000, 2000], jitter: 0 },
    hookState: { isActive: () => true, disable: async () => undefined },
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
  const watch = setInterval(() => {
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
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      arrived: latencies.length,
      hangOutstandingMax,
      failCalls,
      heldBack: { ...pipeline.stats().heldBack },
    };
  } finally {
    clearInterval(watch);
    await pipeline.close(0);
    await r.close();
  }
}

describe('isolation per endpoint on one receiver host', () => {
  it('a hanging and a failing endpoint do not hold up 100 healthy endpoints of the same host', {
    timeout: 180_000,
  }, async (t) => {
    await run(false); // warm-up: the first run pays for JIT compilation and connection set-up
    // ABBA order, so that neither kind of run profits from coming later.
    const b1 = await run(false);
    const x1 = await run(true);
    const x2 = await run(true);
    const b2 = await run(false);
    const mean = (a: number, b: number) => (a + b) / 2;
    const base = {
      ...b1,
      p50: mean(b1.p50, b2.p50),
      p99: mean(b1.p99, b2.p99),
      arrived: Math.min(b1.arrived, b2.arrived),
    };
    const bad = {
      ...x1,
      p50: mean(x1.p50, x2.p50),
      p99: mean(x1.p99, x2.p99),
      arrived: Math.min(x1.arrived, x2.arrived),
      hangOutstandingMax: Math.max(x1.hangOutstandingMax, x2.hangOutstandingMax),
    };
    const ratio = bad.p99 / base.p99;
    t.diagnostic(
      `healthy fire→receive p99: ${bad.p99.toFixed(1)} ms with the bad endpoints, ${base.p99.toFixed(1)} ms without; ratio ${ratio.toFixed(2)} (p50 ${bad.p50.toFixed(1)} / ${base.p50.toFixed(1)} ms)`,
    );
    if (process.env.HOOKD_ISOLATION_REPORT) console.log(JSON.stringify({ runs: [b1, x1, x2, b2], ratio }));
    assert.equal(base.arrived, HEALTHY * ROUNDS);
    assert.equal(bad.arrived, HEALTHY * ROUNDS, 'every healthy callback arrived despite the bad endpoints');
    assert.ok(
      bad.hangOutstandingMax <= 8,
      `the hanging endpoint held ${bad.hangOutstandingMax} slots (at most 8)`,
    );
    assert.ok(bad.failCalls >= 5, 'the failing endpoint was tried');
    assert.ok(bad.heldBack.endpoint! > 0, 'the per-endpoint limit held the hanging endpoint back');
    assert.ok(bad.heldBack.endpoint_circuit! > 0, "the failing endpoint's circuit opened");
    // Generous on a shared 2-core machine, where identical runs differ several-fold; the ±20 %
    // target is for a quiet machine (docs/BENCHMARKS.md). Keyed by origin as before, the hanging
    // endpoint's 15 s time-outs would hold every healthy callback for seconds: far outside this.
    const bound = Math.max(4 * base.p99, base.p99 + 3000);
    assert.ok(
      bad.p99 < bound,
      `p99 ${bad.p99.toFixed(0)} ms against ${base.p99.toFixed(0)} ms (ratio ${ratio.toFixed(2)})`,
    );
  });
});
