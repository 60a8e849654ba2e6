import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { AttemptMessage } from '../../src/delivery/delivery-events.js';
import { DeliveryPipeline } from '../../src/delivery/pipeline.js';
import { samePlanForAll } from '../../src/delivery/plan/index.js';
import type { FiredEvent } from '../../src/engine/fired-event.js';
import { AddressPolicy } from '../../src/policy/address-policy.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import {
  httpTransport,
  type SendOutcome,
  type TransportAttempt,
  type TransportContext,
  type TransportModule,
  TransportRegistry,
} from '../../src/transports/index.js';
import { until } from '../helpers/until.js';

// The delivery core against a transport of the test's own (a double of the extension point, not
// of a part of hookd): a "queue" receiver that is down until the test brings it back, and then
// says so through `onReconnect`, as a broker transport does when its connection is re-made.

class QueueReceiver {
  up = false;
  ctx: TransportContext | undefined;
  readonly got: TransportAttempt[] = [];
  readonly module: TransportModule = {
    schemes: ['tq'],
    receiverKey: (u) => `tq://${u.host}`,
    check: () => undefined,
    describe: (u) => `tq://${u.host}${u.pathname}`,
    create: (ctx) => {
      this.ctx = ctx;
      return {
        send: async (a): Promise<SendOutcome> => {
          if (!this.up) return { kind: 'retry', text: 'connection refused', latencyMs: 1, unreachable: true };
          this.got.push(a);
          return { kind: 'delivered', text: `confirmed by ${new URL(a.url).host}`, latencyMs: 1 };
        },
        abortAll: () => undefined,
        close: async () => undefined,
      };
    },
  };
  back(): void {
    this.up = true;
    this.ctx?.onReconnect?.('tq://127.0.0.1:5999');
  }
}

const event = (n: number, url: string): FiredEvent => ({
  hookId: `hk_seam${n}`,
  owner: 'alice',
  hookType: 1,
  persist: false,
  firedAt: new Date().toISOString(),
  trigger: { method: 'PUT', path: `/ts/${n}` },
  request: { method: 'POST', url, headers: { 'content-type': 'application/json' }, body: `{"n":${n}}` },
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function pipelineWith(q: QueueReceiver): Promise<{ p: DeliveryPipeline; attempts: AttemptMessage[] }> {
  const p = new DeliveryPipeline({
    stores: { durable: new MemoryDeliveryStore(), ephemeral: new MemoryDeliveryStore() },
    send: {
      policy: new AddressPolicy(['127.0.0.0/8']),
      transports: new TransportRegistry([httpTransport, q.module]),
    },
    plans: samePlanForAll(),
    // After the first failure the next attempt is ten minutes away, and the breaker's cool-down too.
    schedule: { delaysMs: [0, 600_000, 600_000], jitter: 0 },
    limits: { breaker: { threshold: 1, cooldownMs: 600_000 } },
  });
  const attempts: AttemptMessage[] = [];
  p.events.on('attempt', (m) => attempts.push(m));
  await p.start();
  cleanups.push(() => p.close(0));
  return { p, attempts };
}

describe('the delivery core on a transport other than HTTP', () => {
  it('records the receipt in words with no HTTP status, and the cause of a failure', async () => {
    const q = new QueueReceiver();
    q.up = true;
    const { p, attempts } = await pipelineWith(q);
    p.accept([event(1, 'tq://guest:secret@127.0.0.1:5999/ts.1')]);
    await until(
      'the delivery succeeded',
      async () => (await p.list('hk_seam1')).items[0]?.status === 'succeeded',
    );
    const d = (await p.list('hk_seam1')).items[0]!;
    assert.equal(d.lastStatusCode, null);
    assert.equal(d.lastError, null);
    const detail = await p.getWithAttempts(d.id);
    assert.equal(detail?.attempts[0]?.statusCode, null);
    assert.equal(detail?.attempts[0]?.responseBody, 'confirmed by 127.0.0.1:5999');
    assert.equal(q.got[0]?.id, d.id, 'the delivery id goes with the message');
    assert.equal(q.got[0]?.contentType, 'application/json');
    assert.equal(
      q.got[0]?.url,
      'tq://guest:secret@127.0.0.1:5999/ts.1',
      'the transport gets the credentials',
    );
    assert.equal(attempts[0]?.Url, 'tq://guest:REDACTED@127.0.0.1:5999/ts.1', 'the tail never sees them');
  });

  it("half-opens a receiver's breaker at its reconnect and sends what the open circuit held back", async () => {
    const q = new QueueReceiver();
    const { p, attempts } = await pipelineWith(q);
    p.accept([event(2, 'tq://127.0.0.1:5999/ts.2')]);
    await until('the first attempt', () => attempts.length >= 1);
    assert.equal(attempts[0]!.Error, 'connection refused');
    assert.equal(attempts[0]!.StatusCode, null);
    // The circuit is open now: this one is not sent, and would wait ten minutes.
    p.accept([event(3, 'tq://127.0.0.1:5999/ts.3')]);
    await until('the shed attempt', () => attempts.length >= 2);
    assert.match(attempts[1]!.Error ?? '', /circuit/);
    assert.equal(q.got.length, 0);
    q.back();
    await until('the held delivery sent after the reconnect', () => q.got.length >= 1);
    assert.equal(q.got[0]!.url, 'tq://127.0.0.1:5999/ts.3');
  });
});
