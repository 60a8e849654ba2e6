import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { connect as amqpConnect, type ConsumeMessage } from 'amqplib';
import mqtt from 'mqtt';
import { createClient } from 'redis';
import { HookdClient } from '../../src/client/index.js';
import { amqpTransport } from '../../src/transports/amqp/index.js';
import {
  mqttTransport,
  natsTransport,
  type Transport,
  type TransportAttempt,
} from '../../src/transports/index.js';
import { RESERVED_FIELD, redisTransport } from '../../src/transports/redis/index.js';
import { type CallbackHeaders, verifyCallback } from '../../src/verify/index.js';
import { startHookd } from '../helpers/hookd.js';
import { startReceiver } from '../helpers/servers.js';
import { brokerMissing, recordingContext, uniqueName } from '../helpers/transport-kit.js';
import { until } from '../helpers/until.js';
import { newSigningSecret, STRIPE, signWithHookd } from './signed.js';

// Asked before any suite is declared: a top-level await between suites can let the runner
// finish the file before the suites after it are declared, so they would never run.
const noAmqp = await brokerMissing('RabbitMQ', 5672);
const noMqtt = await brokerMissing('Mosquitto', 1883);
const noNats = await brokerMissing('NATS', 4222);
const noRedis = await brokerMissing('Redis', 6379);

// What hookd signs verifies as each transport's consumer gets it: an HTTP receiver's headers from
// a real hookd, and a message sent by hookd's transport through the real broker, its headers read
// back in the broker client's own shape (AMQP headers, MQTT user properties, NATS MsgHdrs, Redis
// stream fields) and handed to verifyCallback as they are.

const SECRET = newSigningSecret();
const BODY = JSON.stringify({ series: 'ts1', value: 42 });
const SCHEMES = ['standard', 'github', STRIPE] as const;

function attempt(url: string): TransportAttempt {
  const s = signWithHookd(BODY, { secret: SECRET });
  return {
    id: s.id,
    url,
    method: 'POST',
    headers: s.list,
    body: BODY,
    contentType: 'application/json',
    sentAt: Date.now(),
  };
}

function assertVerifies(body: string | Uint8Array, headers: CallbackHeaders, secret = SECRET): void {
  for (const scheme of SCHEMES) {
    const r = verifyCallback({ body, headers, secret, scheme });
    assert.equal(
      r.ok,
      true,
      `${String(typeof scheme === 'string' ? scheme : scheme.Header)}: ${r.ok ? '' : r.reason}`,
    );
  }
  const changed = typeof body === 'string' ? `${body} ` : Buffer.concat([body, Buffer.from(' ')]);
  assert.equal(verifyCallback({ body: changed, headers, secret }).ok, false);
}

async function sending(t: Transport, a: TransportAttempt): Promise<void> {
  try {
    const outcome = await t.send(a);
    assert.equal(outcome.kind, 'delivered', outcome.text);
  } finally {
    await t.close();
  }
}

describe('verifyCallback over HTTP from a real hookd', () => {
  it('a hook signing v1, v1a, github and a template: each verifies from the request as received', async () => {
    const d = await startHookd();
    const receiver = await startReceiver();
    const client = new HookdClient({ baseUrl: d.url, token: d.token });
    try {
      const h = await client.hooks.create({
        PathPattern: '/verify/(*)',
        Methods: ['POST'],
        Type: 1,
        Callback: `${receiver.url}/cb`,
        CallbackContent: '{"ts":"$1"}',
        Signature: { Schemes: ['v1', 'v1a', 'github', { ...STRIPE }] },
      });
      await client.report({ Method: 'POST', Path: '/verify/ts1', StatusCode: 200 });
      const [call] = await receiver.waitFor(1);
      const { Secret, PublicKey } = await client.secrets.get(h.Id);
      assertVerifies(call!.body, call!.headers, Secret);
      assert.equal(verifyCallback({ body: call!.body, headers: call!.headers, secret: PublicKey }).ok, true);
      const r = verifyCallback({ body: call!.body, headers: call!.headers, secret: Secret });
      assert.ok(r.ok && r.id === call!.headers['webhook-id']);
      // After a rotation the callback carries both signatures: either secret verifies.
      await client.secrets.rotate(h.Id);
      await client.report({ Method: 'POST', Path: '/verify/ts2', StatusCode: 200 });
      const calls = await receiver.waitFor(2);
      const next = calls[1]!;
      const fresh = (await client.secrets.get(h.Id)).Secret;
      for (const secret of [Secret, fresh]) {
        assert.equal(verifyCallback({ body: next.body, headers: next.headers, secret }).ok, true);
      }
    } finally {
      await client.close();
      await receiver.close();
      await d.close();
    }
  });
});

describe('verifyCallback from AMQP message headers (RabbitMQ)', { skip: noAmqp }, () => {
  it('verifies m.properties.headers as amqplib gives them', async () => {
    const conn = await amqpConnect('amqp://guest:guest@127.0.0.1:5672');
    const ch = await conn.createChannel();
    const queue = uniqueName('hookd-verify');
    await ch.assertQueue(queue, { durable: false, autoDelete: true });
    const got: ConsumeMessage[] = [];
    await ch.consume(queue, (m) => m && got.push(m), { noAck: true });
    try {
      await sending(
        amqpTransport.create(recordingContext().ctx),
        attempt(`amqp://guest:guest@127.0.0.1:5672/%2F?routing_key=${queue}`),
      );
      const [m] = await until('the message', () => (got.length > 0 ? got : undefined));
      assertVerifies(m!.content, (m!.properties.headers ?? {}) as CallbackHeaders);
    } finally {
      await ch.deleteQueue(queue);
      await conn.close();
    }
  });
});

describe('verifyCallback from MQTT 5 user properties (Mosquitto)', { skip: noMqtt }, () => {
  it('verifies packet.properties.userProperties as mqtt.js gives them', async () => {
    const topic = uniqueName('verify');
    const sub = await mqtt.connectAsync('mqtt://127.0.0.1:1883', { protocolVersion: 5, reconnectPeriod: 0 });
    const got: { payload: Buffer; props: CallbackHeaders }[] = [];
    sub.on('message', (_t, payload, packet) => {
      got.push({ payload, props: (packet.properties?.userProperties ?? {}) as CallbackHeaders });
    });
    await sub.subscribeAsync(`${topic}/#`, { qos: 1 });
    try {
      await sending(
        mqttTransport.create(recordingContext().ctx),
        attempt(`mqtt://127.0.0.1:1883/${topic}/x`),
      );
      const [m] = await until('the message', () => (got.length > 0 ? got : undefined));
      assertVerifies(m!.payload, m!.props);
    } finally {
      await sub.endAsync();
    }
  });
});

describe('verifyCallback from NATS headers (JetStream)', { skip: noNats }, () => {
  it("verifies msg.headers, the client's MsgHdrs, as it is", async () => {
    const nc = await natsConnect({ servers: '127.0.0.1:4222' });
    const jsm = await jetstreamManager(nc);
    const name = uniqueName('HOOKDVERIFY');
    const base = uniqueName('verify').toLowerCase();
    await jsm.streams.add({ name, subjects: [`${base}.>`] });
    try {
      await sending(natsTransport.create(recordingContext().ctx), attempt(`nats://127.0.0.1:4222/${base}.x`));
      const consumer = await jetstream(nc).consumers.get(name);
      const m = await consumer.next({ expires: 5000 });
      assert.ok(m?.headers, 'a message with headers');
      assertVerifies(m.data, m.headers);
    } finally {
      await jsm.streams.delete(name).catch(() => false);
      await nc.close();
    }
  });
});

describe('verifyCallback from Redis stream fields', { skip: noRedis }, () => {
  it('verifies the fields of an XREAD entry, the payload in its body field', async () => {
    const admin = createClient({ socket: { host: '127.0.0.1', port: 6379 } });
    await admin.connect();
    const key = uniqueName('hookd:verify');
    try {
      await sending(
        redisTransport.create(recordingContext().ctx),
        attempt(`redis://127.0.0.1:6379/0?stream=${key}`),
      );
      const read = (await admin.sendCommand(['XREAD', 'COUNT', '1', 'STREAMS', key, '0'])) as Record<
        string,
        [string, string[]][]
      >;
      const fields = read[key]![0]![1];
      const map: Record<string, string> = {};
      for (let i = 0; i < fields.length; i += 2) map[fields[i]!] = fields[i + 1]!;
      assertVerifies(map[RESERVED_FIELD]!, map);
    } finally {
      await admin.del(key);
      admin.destroy();
    }
  });
});
