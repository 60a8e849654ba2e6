import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Attempts } from '../../src/transports/broker-link/attempts.js';

describe("a broker send and the attempt's signal", () => {
  it('answers aborted when the signal aborts while the broker has not answered', async () => {
    const attempts = new Attempts(60_000);
    const cut = new AbortController();
    let live: (() => boolean) | undefined;
    const sent = attempts.run(
      (ms) => `no answer within ${ms} ms`,
      (isLive) => {
        live = isLive;
        return new Promise(() => undefined);
      },
      cut.signal,
    );
    cut.abort();
    const outcome = await sent;
    assert.equal(outcome.aborted, true);
    assert.equal(outcome.kind, 'retry');
    assert.match(outcome.text, /aborted: hookd is shutting down/);
    assert.equal(live?.(), false, 'the work is told the attempt is over');
  });

  it('answers aborted at once, putting nothing on the wire, when the signal has already aborted', async () => {
    const attempts = new Attempts(60_000);
    const cut = new AbortController();
    cut.abort();
    let wire = false;
    const outcome = await attempts.run(
      (ms) => `no answer within ${ms} ms`,
      async (live) => {
        if (live()) wire = true;
        return { kind: 'delivered', text: 'sent' };
      },
      cut.signal,
    );
    assert.equal(outcome.aborted, true);
    assert.equal(wire, false);
  });
});
