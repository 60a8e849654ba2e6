import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HookRateLimiter } from '../../src/delivery/rate-limit.js';

/** The most send times inside any window of `ms`. */
export function busiestWindow(times: number[], ms: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= ms) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

describe('HookRateLimiter (GCRA)', () => {
  it('a burst of 100 at 10/s with Burst 10: 10 at once, then one every 100 ms, in order', () => {
    const rl = new HookRateLimiter();
    const limit = { PerSecond: 10, Burst: 10 };
    const sendAt = Array.from({ length: 100 }, () => rl.reserve('h', limit, 0));
    assert.deepEqual(sendAt.slice(0, 10), new Array(10).fill(0));
    for (let i = 10; i < 100; i++)
      assert.ok(Math.abs(sendAt[i]! - (i - 9) * 100) < 1e-6, `#${i}: ${sendAt[i]}`);
    assert.ok(busiestWindow(sendAt, 1000) <= 10 + 10);
    // Steady state: no window of 1 s after the burst holds more than the rate.
    assert.ok(busiestWindow(sendAt.slice(10), 1000) <= 10);
  });

  it('an idle hook gets its burst back; hooks do not share buckets', () => {
    const rl = new HookRateLimiter();
    const limit = { PerSecond: 2, Burst: 1 };
    assert.equal(rl.reserve('a', limit, 0), 0);
    assert.equal(rl.reserve('a', limit, 0), 500);
    assert.equal(rl.reserve('b', limit, 0), 0);
    assert.equal(rl.reserve('a', limit, 10_000), 0);
  });

  it('fractional rates: 0.5/s is one callback every 2 s', () => {
    const rl = new HookRateLimiter();
    const limit = { PerSecond: 0.5, Burst: 1 };
    assert.deepEqual(
      [0, 0, 0].map(() => rl.reserve('h', limit, 0)),
      [0, 2000, 4000],
    );
  });
});
