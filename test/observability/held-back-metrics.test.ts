import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook, type Receiver, startReceiver } from '../helpers/servers.js';
import { counter, until } from '../helpers/until.js';

// docs/API.md /metrics: `hookd_delivery_held_back_total{by}` counts attempts held back by what
// held them (a per-endpoint limit, an open circuit…), read from the daemon's real pipeline.

let d: TestDaemon;
let hanging: Receiver;
let failing: Receiver;
before(async () => {
  hanging = await startReceiver({ reply: () => 'hang' });
  failing = await startReceiver({ reply: () => ({ status: 500 }) });
  d = await startHookd();
});
after(async () => {
  await d.close();
  await hanging.close();
  await failing.close();
});

const held = (by: string) => counter(d.opsUrl, 'hookd_delivery_held_back_total', `by="${by}"`);

async function fire(path: string, n: number): Promise<void> {
  const items = Array.from({ length: n }, (_, i) => ({
    Method: 'GET',
    Path: `${path}/${i}`,
    StatusCode: 200,
  }));
  const r = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', items);
  assert.equal(r.body.fired, n, r.text);
}

describe('hookd_delivery_held_back_total{by}', () => {
  it('by="endpoint": more callbacks to one endpoint than it may have in flight (8)', async () => {
    await createHook(d, { PathPattern: '/hang/(*)', Methods: ['GET'], Callback: `${hanging.url}/h` });
    assert.equal(await held('endpoint'), 0);
    await fire('/hang', 12);
    await until('8 callbacks in flight at the hanging endpoint', () => hanging.outstanding() === 8);
    await until(
      'the others held back by the endpoint limit',
      () => held('endpoint'),
      (n) => n > 0,
    );
    assert.equal(hanging.outstanding(), 8, 'never more than the limit in flight');
  });

  it('by="endpoint_circuit": attempts held while the endpoint\'s circuit is open', async () => {
    await createHook(d, {
      PathPattern: '/fail/(*)',
      Methods: ['GET'],
      Callback: `${failing.url}/f`,
      RetrySchedule: [0, 0.2, 0.2],
    });
    const before = await held('endpoint_circuit');
    await fire('/fail', 8);
    await until(
      'the circuit holding attempts back',
      () => held('endpoint_circuit'),
      (n) => n > before,
    );
    // 5 failures open it: the endpoint saw no more than that before it held the rest.
    assert.ok(failing.calls.length >= 5, `${failing.calls.length} attempts reached the failing endpoint`);
    const metrics = await (await fetch(`${d.opsUrl}/metrics`)).text();
    assert.match(
      metrics,
      /^hookd_breaker_state\{[^}]*scope="endpoint"[^}]*\} 2$/m,
      'the breaker shows open (2)',
    );
  });
});
