import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEALTHY, ROUNDS, runIsolation } from '../../bench/isolation.js';

// Isolation per endpoint, protection per host: one receiver host serves 100 healthy
// endpoint paths, one path that never answers and one that answers 500 every time. What must hold
// on any machine is checked here: every healthy callback arrives, and all of them before the
// hanging endpoint's first attempt runs out (so none waited on it). The latency ratio against a
// run without the bad paths is a measurement: bench/isolation.ts.
describe('isolation per endpoint on one receiver host', () => {
  it('a hanging and a failing endpoint do not hold up 100 healthy endpoints of the same host', {
    timeout: 180_000,
  }, async () => {
    const bad = await runIsolation(true);
    assert.equal(bad.arrived, HEALTHY * ROUNDS, 'every healthy callback arrived despite the bad endpoints');
    assert.equal(
      bad.arrivedWhenHangEnded,
      HEALTHY * ROUNDS,
      'every healthy callback arrived before the hanging endpoint gave up its first attempt',
    );
    assert.ok(
      bad.hangOutstandingMax <= 8,
      `the hanging endpoint held ${bad.hangOutstandingMax} slots (at most 8)`,
    );
    assert.ok(bad.failCalls >= 5, 'the failing endpoint was tried');
    assert.ok(bad.heldBack.endpoint! > 0, 'the per-endpoint limit held the hanging endpoint back');
    assert.ok(bad.heldBack.endpoint_circuit! > 0, "the failing endpoint's circuit opened");
  });
});
