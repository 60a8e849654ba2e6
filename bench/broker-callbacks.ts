/**
 * Callbacks per second to each message broker through hookd, beside the broker's own client
 * publishing the same messages directly (a ratio, one run per transport), and beside the
 * transport module alone (`send` through the Transport interface, no proxy, no outbox), which
 * says how much of the gap is the transport and how much the rest of hookd.
 *
 * Direct, 64 in flight, the same body and Standard Webhooks headers, every acknowledgement
 * awaited: amqplib on a confirm channel (persistent, mandatory), node-redis `XADD`, mqtt.js QoS 1
 * (headers as user properties), nats.js to JetStream (`Nats-Msg-Id` and headers). Through hookd:
 * requests proxied to an upstream, each firing a hook whose Callback is the broker URL with `$1`
 * in the routing key, stream key, topic or subject, 64 requests in flight; the time runs from the
 * first request until the consumer has every message.
 *
 *   node dist/bench/broker-callbacks.js [messages=5000] [brokers=amqp,redis,mqtt,nats]
 */
import { rmSync } from 'node:fs';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect, headers as natsHeaders } from '@nats-io/transport-node';
import { connect as amqpConnect } from 'amqplib';
import mqtt from 'mqtt';
import { createClient } from 'redis';
import { AddressPolicy } from '../src/policy/index.js';
import { newSigningSecret, secretKey, signatureHeader } from '../src/signing/index.js';
import {
  amqpTransport,
  mqttTransport,
  natsTransport,
  redisTransport,
  type TransportModule,
} from '../src/transports/index.js';
import { startHookd, startUpstream, tempDir } from './lib/peers.js';
import { sleep } from './lib/process.js';

const N = Number(process.argv[2] ?? 5000);
const ONLY = (process.argv[3] ?? 'amqp,redis,mqtt,nats').split(',');
const WINDOW = 64;
const BODY = '{"path": "/repositories/r1/timeseries/ts1"}';
const SECRET = newSigningSecret();
const BASE = `hookdbench${process.pid}`;

function signedHeaders(i: number): Record<string, string> {
  const id = `msg_bench${process.pid}x${i}`;
  const now = Date.now();
  const ts = String(Math.floor(now / 1000));
  const keys = { current: secretKey(SECRET), previous: undefined, previousValidUntil: 0 };
  return {
    'webhook-id': id,
    'webhook-timestamp': ts,
    'webhook-signature': signatureHeader(keys, id, ts, BODY, now),
  };
}

/** Runs `task(i)` for i in [0, n) with at most WINDOW at once; resolves when all are done. */
async function windowed(n: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: WINDOW }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 180_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** One broker under test: how to publish directly, and where the consumer counts arrivals. */
interface Broker {
  readonly name: string;
  readonly module: TransportModule;
  /** Messages per second through the broker's own client, acknowledgements awaited. */
  direct(): Promise<number>;
  readonly aloneUrl: string;
  /** The Callback, with `$1` (the value `ts1`) in the key. */
  readonly hookdUrl: string;
  /** How many messages the consumer has for `aloneUrl` / for `hookdUrl` so far. */
  aloneCount(): Promise<number>;
  hookdCount(): Promise<number>;
  cleanup(): Promise<void>;
}

async function amqpBroker(): Promise<Broker> {
  const admin = await amqpConnect('amqp://guest:guest@127.0.0.1:5672');
  const ch = await admin.createChannel();
  const queue = `${BASE}-ts1`;
  await ch.assertQueue(queue, { durable: false });
  let received = 0;
  await ch.consume(queue, () => received++, { noAck: true });
  const count = async () => received;
  return {
    name: 'amqp',
    module: amqpTransport,
    async direct() {
      const model = await amqpConnect('amqp://guest:guest@127.0.0.1:5672');
      const confirm = await model.createConfirmChannel();
      const start = received;
      const t0 = performance.now();
      await windowed(N, (i) => {
        const headers = signedHeaders(i);
        return new Promise<void>((resolve, reject) =>
          confirm.publish(
            '',
            queue,
            Buffer.from(BODY),
            {
              persistent: true,
              mandatory: true,
              messageId: headers['webhook-id'],
              contentType: 'application/json',
              timestamp: Math.floor(Date.now() / 1000),
              headers,
            },
            (err: unknown) => (err ? reject(err) : resolve()),
          ),
        );
      });
      await until('the direct AMQP messages', () => received - start >= N);
      const s = (performance.now() - t0) / 1000;
      await model.close();
      return N / s;
    },
    aloneUrl: `amqp://guest:guest@127.0.0.1:5672/%2F?routing_key=${queue}`,
    hookdUrl: `amqp://guest:guest@127.0.0.1:5672/%2F?routing_key=${BASE}-$1`,
    aloneCount: count,
    hookdCount: count,
    async cleanup() {
      await ch.deleteQueue(queue);
      await admin.close();
    },
  };
}

async function redisBroker(): Promise<Broker> {
  const redis = createClient({ socket: { host: '127.0.0.1', port: 6379 } });
  await redis.connect();
  const stream = `hookd:bench:${process.pid}`;
  return {
    name: 'redis',
    module: redisTransport,
    async direct() {
      const t0 = performance.now();
      await windowed(N, (i) =>
        redis.sendCommand([
          'XADD',
          `${stream}:direct`,
          '*',
          'body',
          BODY,
          ...Object.entries(signedHeaders(i)).flat(),
        ]),
      );
      return N / ((performance.now() - t0) / 1000);
    },
    aloneUrl: `redis://127.0.0.1:6379/0?stream=${stream}:alone`,
    hookdUrl: `redis://127.0.0.1:6379/0?stream=${stream}:$1`,
    aloneCount: () => redis.xLen(`${stream}:alone`),
    hookdCount: () => redis.xLen(`${stream}:ts1`),
    async cleanup() {
      await redis.del([`${stream}:direct`, `${stream}:alone`, `${stream}:ts1`]);
      redis.destroy();
    },
  };
}

async function mqttBroker(): Promise<Broker> {
  const sub = await mqtt.connectAsync('mqtt://127.0.0.1:1883', { protocolVersion: 5 });
  let received = 0;
  sub.on('message', () => received++);
  await sub.subscribeAsync(`${BASE}/#`, { qos: 1 });
  const count = async () => received;
  return {
    name: 'mqtt',
    module: mqttTransport,
    async direct() {
      const c = await mqtt.connectAsync('mqtt://127.0.0.1:1883', { protocolVersion: 5 });
      const start = received;
      const t0 = performance.now();
      await windowed(N, (i) =>
        c.publishAsync(`${BASE}/direct/read`, BODY, {
          qos: 1,
          properties: { contentType: 'application/json', userProperties: signedHeaders(i) },
        }),
      );
      await until('the direct MQTT messages', () => received - start >= N);
      const s = (performance.now() - t0) / 1000;
      await c.endAsync();
      return N / s;
    },
    aloneUrl: `mqtt://127.0.0.1:1883/${BASE}/alone/read`,
    hookdUrl: `mqtt://127.0.0.1:1883/${BASE}/$1/read`,
    aloneCount: count,
    hookdCount: count,
    cleanup: () => sub.endAsync(),
  };
}

async function natsBroker(): Promise<Broker> {
  const nc = await natsConnect({ servers: '127.0.0.1:4222' });
  const jsm = await jetstreamManager(nc);
  const stream = `HOOKD_BENCH_${process.pid}`;
  await jsm.streams.add({ name: stream, subjects: [`${BASE}.>`] });
  const stored = async (subject: string) =>
    (await jsm.streams.info(stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
  return {
    name: 'nats',
    module: natsTransport,
    async direct() {
      const js = jetstream(nc);
      const t0 = performance.now();
      await windowed(N, (i) => {
        const h = natsHeaders();
        const sh = signedHeaders(i);
        for (const [k, v] of Object.entries(sh)) h.set(k, v);
        h.set('Content-Type', 'application/json');
        return js.publish(`${BASE}.direct.read`, BODY, { msgID: sh['webhook-id'], headers: h });
      });
      return N / ((performance.now() - t0) / 1000);
    },
    aloneUrl: `nats://127.0.0.1:4222/${BASE}.alone.read`,
    hookdUrl: `nats://127.0.0.1:4222/${BASE}.$1.read`,
    aloneCount: () => stored(`${BASE}.alone.read`),
    hookdCount: () => stored(`${BASE}.ts1.read`),
    async cleanup() {
      await jsm.streams.delete(stream).catch(() => false);
      await nc.close();
    },
  };
}

async function transportAlone(module: TransportModule, url: string, done: () => Promise<boolean>) {
  const t = module.create({
    policy: new AddressPolicy(['127.0.0.0/8']),
    lookup: undefined,
    timeoutMs: 15_000,
    connectTimeoutMs: 10_000,
    perReceiver: WINDOW,
    log: () => {},
  });
  const t0 = performance.now();
  await windowed(N, async (i) => {
    const h = signedHeaders(i);
    const o = await t.send({
      id: `${h['webhook-id']}t`,
      url,
      method: 'POST',
      headers: Object.entries(h).flat(),
      body: BODY,
      contentType: 'application/json',
      sentAt: Date.now(),
    });
    if (o.kind !== 'delivered') throw new Error(o.text);
  });
  await until('the transport messages', done);
  const s = (performance.now() - t0) / 1000;
  await t.close();
  return N / s;
}

async function throughHookd(callback: string, done: () => Promise<boolean>): Promise<number> {
  const upstream = await startUpstream(undefined);
  const dataDir = tempDir('broker');
  const hookd = await startHookd({
    core: undefined,
    dataDir,
    upstream: upstream.url,
    extraArgs: ['--callback-schemes', 'http,https,amqp,redis,mqtt,nats'],
  });
  try {
    const res = await fetch(`${hookd.url}/hooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hookd.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        PathPattern: '/repositories/*/timeseries/(*)',
        Methods: ['GET'],
        Callback: callback,
        CallbackContent: '{"path": "$REQUEST_PATH"}',
      }),
    });
    if (res.status !== 201) throw new Error(`creating the hook: ${res.status} ${await res.text()}`);
    const t0 = performance.now();
    await windowed(N, async () => {
      const r = await fetch(`${hookd.url}/repositories/r1/timeseries/ts1`);
      await r.arrayBuffer();
    });
    await until('the callbacks', done);
    return N / ((performance.now() - t0) / 1000);
  } finally {
    await hookd.stop();
    await upstream.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const MAKERS: Record<string, () => Promise<Broker>> = {
  amqp: amqpBroker,
  redis: redisBroker,
  mqtt: mqttBroker,
  nats: natsBroker,
};

async function main(): Promise<void> {
  const results: Record<string, { direct: number; transport: number; hookd: number; ratio: number }> = {};
  for (const name of ONLY) {
    const make = MAKERS[name];
    if (make === undefined)
      throw new Error(`unknown broker ${name} (known: ${Object.keys(MAKERS).join(',')})`);
    const b = await make();
    try {
      const direct = await b.direct();
      let before = await b.aloneCount();
      const transport = await transportAlone(
        b.module,
        b.aloneUrl,
        async () => (await b.aloneCount()) - before >= N,
      );
      before = await b.hookdCount();
      const hookd = await throughHookd(b.hookdUrl, async () => (await b.hookdCount()) - before >= N);
      results[b.name] = { direct, transport, hookd, ratio: hookd / direct };
    } finally {
      await b.cleanup();
    }
  }
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `${name}: direct ${r.direct.toFixed(0)} msg/s, transport alone ${r.transport.toFixed(0)} msg/s, ` +
        `through hookd ${r.hookd.toFixed(0)} callbacks/s, ratio ${r.ratio.toFixed(2)}`,
    );
  }
  console.log(JSON.stringify({ messages: N, window: WINDOW, results }));
}

await main();
