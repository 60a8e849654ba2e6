import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Channel, type ChannelModel, type ConsumeMessage, connect } from 'amqplib';
import { escapeAmqpValue } from '../../src/transports/amqp/index.js';
import { type BrokerMessage, brokerContract, type DeliveryView, hookdArgs } from '../helpers/broker-e2e.js';
import { api, type HookdProcess, spawnHookd } from '../helpers/hookd.js';
import { createHook, startUpstream, type Upstream } from '../helpers/servers.js';
import { brokerMissing, burst, uniqueName } from '../helpers/transport-kit.js';
import { until } from '../helpers/until.js';

const skip = await brokerMissing('RabbitMQ', 5672);

let admin: ChannelModel | undefined;
let ch: Channel;
const exchanges: string[] = [];
const queues: string[] = [];

async function channel(): Promise<Channel> {
  if (!admin) {
    admin = await connect('amqp://guest:guest@127.0.0.1:5672');
    ch = await admin.createChannel();
  }
  return ch;
}

after(async () => {
  if (!admin) return;
  for (const q of queues) await ch.deleteQueue(q);
  for (const x of exchanges) await ch.deleteExchange(x);
  await admin.close();
});

const inKey = (v: string) => decodeURIComponent(escapeAmqpValue(v));

describe('amqp end to end', { skip }, () => {
  brokerContract({
    scheme: 'amqp',
    port: 5672,
    receipt: /^confirmed by 127\.0\.0\.1:5672, exchange ts\.events_\w+, routing key ts\.(ts2|a%2Eb:c)$/,
    async destination() {
      const c = await channel();
      const exchange = uniqueName('ts.events');
      const queue = uniqueName('hookd-e2e');
      await c.assertExchange(exchange, 'topic', { durable: false });
      await c.assertQueue(queue, { durable: false });
      await c.bindQueue(queue, exchange, 'ts.#');
      exchanges.push(exchange);
      queues.push(queue);
      const got: ConsumeMessage[] = [];
      await c.consume(queue, (m) => m && got.push(m), { noAck: true });
      return {
        callback: (hostPort) => `amqp://guest:guest@${hostPort}/%2F?exchange=${exchange}&routing_key=ts.$1`,
        keyFor: (v) => `ts.${inKey(v)}`,
        messages: async () =>
          got.map(
            (m): BrokerMessage => ({
              key: m.fields.routingKey,
              body: m.content.toString(),
              headers: Object.fromEntries(
                Object.entries(m.properties.headers ?? {}).map(([k, v]) => [k, String(v)]),
              ),
            }),
          ),
      };
    },
  });

  describe('refusals in the delivery log', () => {
    let upstream: Upstream;
    let d: HookdProcess;

    before(async () => {
      upstream = await startUpstream((_req, res) => {
        res.writeHead(200).end('ok');
      });
      d = await spawnHookd(hookdArgs('amqp', upstream));
    });

    after(async () => {
      await d.stop();
      await upstream.close();
      rmSync(d.dataDir, { recursive: true, force: true });
    });

    it('names an exchange that does not exist, with no HTTP status and no password', async () => {
      const missing = uniqueName('ts.missing');
      const hook = await createHook(d, {
        PathPattern: '/missing/(*)',
        Methods: ['GET'],
        Callback: `amqp://guest:guest@127.0.0.1:5672/%2F?exchange=${missing}&routing_key=ts.$1`,
        CallbackContent: '{"ts":"$1"}',
      });
      await burst(d.url, 1, () => '/missing/ts1', undefined, 1);
      const dl = await until('the refusal in the delivery log', async () => {
        const r = await api<DeliveryView[]>(d.url, d.token, 'GET', `/hooks/${hook.Id}/deliveries`);
        return r.body.find((x) => x.LastError !== null);
      });
      assert.equal(dl.LastStatusCode, null);
      assert.equal(dl.LastError, `exchange ${missing} not found (404 NOT_FOUND)`);
      const one = await api(d.url, d.token, 'GET', `/_hookd/deliveries/${dl.Id}`);
      assert.doesNotMatch(one.text, /guest:guest/);
    });
  });
});
