import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdaptiveLimit, ReceiverPace } from '../../src/pace/index.js';

/** Feeds `rounds` of answers with the limit in use (a backlog), with latency as `latencyAt(inFlight)` says. */
function drive(l: AdaptiveLimit, rounds: number, latencyAt: (n: number) => number): void {
  for (let r = 0; r < rounds; r++) {
    const n = l.limit;
    for (let i = 0; i < n; i++)
      l.observe({ latencyMs: latencyAt(l.limit), inFlight: l.limit, verdict: 'ok' });
  }
}

describe('AdaptiveLimit', () => {
  it('starts at a quarter of the maximum and reaches the maximum while answers stay fast', () => {
    const l = new AdaptiveLimit({ max: 16 });
    assert.equal(l.limit, 4);
    drive(l, 3, () => 10);
    assert.equal(l.limit, 16, 'it doubles per round trip until the first sign of load');
    drive(l, 50, () => 10);
    assert.equal(l.limit, 16);
  });

  it('comes down to the knee of a receiver whose latency grows above it, and stays near it', () => {
    const l = new AdaptiveLimit({ max: 32 });
    const latency = (n: number) => 20 + 15 * Math.max(0, n - 8);
    drive(l, 200, latency);
    assert.ok(l.limit >= 6 && l.limit <= 11, `limit ${l.limit}`);
    assert.equal(l.baselineMs, 20);
  });

  it('halves on an overload answer, once per round trip, and never goes below 1', () => {
    const l = new AdaptiveLimit({ max: 16 });
    drive(l, 3, () => 1);
    l.observe({ latencyMs: 1, inFlight: 16, verdict: 'overload' });
    assert.equal(l.limit, 8);
    l.observe({ latencyMs: 1, inFlight: 16, verdict: 'overload' });
    assert.equal(l.limit, 8, 'answers to attempts sent under the old limit do not cut it again');
    for (let i = 0; i < 200; i++) l.observe({ latencyMs: 1, inFlight: 1, verdict: 'overload' });
    assert.equal(l.limit, 1);
  });

  it('grows back by one per round trip of fast answers, and only while the limit is used', () => {
    const l = new AdaptiveLimit({ max: 16 });
    drive(l, 3, () => 1);
    l.observe({ latencyMs: 1, inFlight: 16, verdict: 'overload' });
    for (let i = 0; i < 100; i++) l.observe({ latencyMs: 1, inFlight: 1, verdict: 'ok' });
    assert.equal(l.limit, 8, 'an idle receiver says nothing about its pace');
    drive(l, 3, () => 1);
    assert.ok(l.limit >= 10 && l.limit <= 12, `limit ${l.limit}`);
  });

  it('follows a receiver that got slower for good: its answers without load lift the baseline', () => {
    const l = new AdaptiveLimit({ max: 16 });
    drive(l, 5, () => 10);
    assert.equal(l.limit, 16);
    drive(l, 300, () => 200);
    assert.ok((l.baselineMs ?? 0) > 100, `baseline ${l.baselineMs}`);
    assert.equal(l.limit, 16, 'a steady 200 ms is its new normal, not load');
  });

  it('learns nothing from answers that say nothing about load', () => {
    const l = new AdaptiveLimit({ max: 16 });
    for (let i = 0; i < 100; i++) l.observe({ latencyMs: 5000, inFlight: 16, verdict: 'other' });
    assert.equal(l.limit, 4);
  });
});

describe('ReceiverPace', () => {
  it('keys limits by receiver; off, every receiver has the maximum', () => {
    for (const adaptive of [true, false]) {
      const p = new ReceiverPace(8, adaptive);
      p.sent('http://a:1');
      p.answered('http://a:1', { latencyMs: 1, inFlight: 8, verdict: 'overload' });
      p.sent('http://b:1');
      assert.equal(p.limitFor('http://a:1'), adaptive ? 1 : 8);
      assert.equal(p.limitFor('http://b:1'), adaptive ? 2 : 8);
      assert.deepEqual(
        [...p.limits()].map((x) => x.limit),
        adaptive ? [1, 2] : [8, 8],
      );
    }
  });

  it('names the receiver of a Callback, and none for one that does not parse', () => {
    const p = new ReceiverPace(8, true);
    assert.equal(p.receiverOf('http://user:pw@h.example:81/x?y'), 'http://h.example:81');
    assert.equal(p.receiverOf('not a url'), undefined);
  });
});

describe('AdaptiveLimit: why the limit is below the maximum', () => {
  it('says nothing at the maximum and "ramping" while climbing from its start', () => {
    const l = new AdaptiveLimit({ max: 8 });
    assert.deepEqual(l.note, { state: 'ramping' });
    l.observe({ latencyMs: 17, inFlight: 1, verdict: 'ok' });
    assert.equal(l.limit, 3);
    assert.deepEqual(l.note, { state: 'ramping' });
    drive(l, 5, () => 17);
    assert.equal(l.limit, 8);
    assert.equal(l.note, undefined);
  });

  it('names the answer that lowered it: 429, 503, time-outs', () => {
    for (const [sample, after] of [
      [{ answerCode: 429 }, '429 Too Many Requests'],
      [{ answerCode: 503 }, '503 Service Unavailable'],
      [{ timedOut: true }, 'time-outs'],
      [{}, 'overload answers (429, 503 or no answer in time)'],
    ] as const) {
      const l = new AdaptiveLimit({ max: 8 });
      drive(l, 5, () => 1);
      l.observe({ latencyMs: 1, inFlight: 8, verdict: 'overload', ...sample });
      assert.equal(l.limit, 4);
      assert.deepEqual(l.note, { state: 'lowered', after });
    }
  });

  it('names the bound slow answers crossed: twice the baseline, or the baseline plus the slack', () => {
    const l = new AdaptiveLimit({ max: 8 });
    drive(l, 5, () => 12);
    drive(l, 1, () => 40);
    assert.ok(l.limit < 8);
    assert.deepEqual(l.note, { state: 'lowered', after: 'answers above 2× its 12 ms baseline' });
    const fast = new AdaptiveLimit({ max: 8 });
    drive(fast, 5, () => 0.4);
    drive(fast, 1, () => 30);
    assert.deepEqual(fast.note, {
      state: 'lowered',
      after: 'answers more than 5 ms above its 0.4 ms baseline',
    });
  });

  it('keeps the reason while it grows back, and drops it at the maximum', () => {
    const l = new AdaptiveLimit({ max: 4 });
    drive(l, 3, () => 1);
    l.observe({ latencyMs: 1, inFlight: 4, verdict: 'overload', answerCode: 429 });
    assert.equal(l.note?.state, 'lowered');
    drive(l, 40, () => 1);
    assert.equal(l.limit, 4);
    assert.equal(l.note, undefined);
  });

  it('ReceiverPace: current() carries the note; with adaptation off there is none', () => {
    const p = new ReceiverPace(8, true);
    p.sent('r');
    p.answered('r', { latencyMs: 3, inFlight: 1, verdict: 'ok' });
    assert.deepEqual(p.current('r'), { limit: 3, max: 8, note: { state: 'ramping' } });
    const off = new ReceiverPace(8, false);
    off.sent('r');
    off.answered('r', { latencyMs: 3, inFlight: 1, verdict: 'overload', answerCode: 429 });
    assert.deepEqual(off.current('r'), { limit: 8, max: 8 });
  });
});
