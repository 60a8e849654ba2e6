/**
 * Callbacks per second to MQTT and NATS JetStream through hookd, beside the broker's own client
 * publishing the same messages directly (a ratio, one run per transport). Direct: mqtt.js
 * publishing QoS 1 with the Standard Webhooks headers as user properties, and nats.js publishing
 * to JetStream with `Nats-Msg-Id` and the headers, waiting for every acknowledgement, 64 in
 * flight. Through hookd: requests proxied to an upstream, each firing a hook whose Callback is
 * the broker URL with `$1` in the topic or subject, 64 requests in flight; the time runs from the
 * first request until the consumer has every message. Beside them, the transport module alone
 * (`send` through the Transport interface, 64 in flight), which says how much of the gap is the
 * transport and how much the rest of hookd (proxying, the durable outbox, the scheduler).
 *
 *   node dist/bench/mqtt-nats-callbacks.js [messages=5000]
 */
import { rmSync } from 'node:fs';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect, headers as natsHeaders } from '@nats-io/transport-node';
import mqtt from 'mqtt';
import { AddressPolicy } from '../src/policy/index.js';
import { newSigningSecret, secretKey, signatureHeader } from '../src/signing/index.js';
import { mqttTransport, natsTransport, type TransportModule } from '../src/transports/index.js';
import { startHookd, startUpstream, tempDir } from './lib/peers.js';
import { sleep } from './lib/process.js';

const N = Number(process.argv[2] ?? 5000);
const WINDOW = 64;
const BODY = '{"path": "/repositories/r1/timeseries/ts1"}';
const SECRET = newSigningSecret();

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

async function mqttDirect(topic: string, received: () => number): Promise<number> {
  const c = await mqtt.connectAsync('mqtt://127.0.0.1:1883', { protocolVersion: 5 });
  const start = received();
  const t0 = performance.now();
  await windowed(N, (i) =>
    c.publishAsync(topic, BODY, {
      qos: 1,
      properties: { contentType: 'application/json', userProperties: signedHeaders(i) },
    }),
  );
  await until('the direct MQTT messages', () => received() - start >= N);
  const s = (performance.now() - t0) / 1000;
  await c.endAsync();
  return N / s;
}

async function natsDirect(subject: string): Promise<number> {
  const nc = await natsConnect({ servers: '127.0.0.1:4222' });
  const js = jetstream(nc);
  const t0 = performance.now();
  await windowed(N, (i) => {
    const h = natsHeaders();
    const sh = signedHeaders(i);
    for (const [k, v] of Object.entries(sh)) h.set(k, v);
    h.set('Content-Type', 'application/json');
    return js.publish(subject, BODY, { msgID: sh['webhook-id'], headers: h });
  });
  const s = (performance.now() - t0) / 1000;
  await nc.close();
  return N / s;
}

async function transportAlone(
  module: TransportModule,
  url: string,
  done: () => Promise<boolean>,
): Promise<number> {
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
  const hookd = await startHookd({ core: undefined, dataDir, upstream: upstream.url });
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

async function main(): Promise<void> {
  const base = `hookdbench${process.pid}`;
  const sub = await mqtt.connectAsync('mqtt://127.0.0.1:1883', { protocolVersion: 5 });
  let received = 0;
  sub.on('message', () => received++);
  await sub.subscribeAsync(`${base}/#`, { qos: 1 });
  const nc = await natsConnect({ servers: '127.0.0.1:4222' });
  const jsm = await jetstreamManager(nc);
  const stream = `HOOKD_BENCH_${process.pid}`;
  await jsm.streams.add({ name: stream, subjects: [`${base}.>`] });
  const stored = async (subject: string) =>
    (await jsm.streams.info(stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
  const results: Record<string, { direct: number; transport: number; hookd: number; ratio: number }> = {};
  try {
    const mqttDirectRate = await mqttDirect(`${base}/direct/read`, () => received);
    let before = received;
    const mqttAlone = await transportAlone(
      mqttTransport,
      `mqtt://127.0.0.1:1883/${base}/alone/read`,
      async () => received - before >= N,
    );
    before = received;
    const mqttHookd = await throughHookd(
      `mqtt://127.0.0.1:1883/${base}/$1/read`,
      async () => received - before >= N,
    );
    results.mqtt = {
      direct: mqttDirectRate,
      transport: mqttAlone,
      hookd: mqttHookd,
      ratio: mqttHookd / mqttDirectRate,
    };

    const natsDirectRate = await natsDirect(`${base}.direct.read`);
    const natsAlone = await transportAlone(
      natsTransport,
      `nats://127.0.0.1:4222/${base}.alone.read`,
      async () => (await stored(`${base}.alone.read`)) >= N,
    );
    const natsHookd = await throughHookd(
      `nats://127.0.0.1:4222/${base}.$1.read`,
      async () => (await stored(`${base}.ts1.read`)) >= N,
    );
    results.nats = {
      direct: natsDirectRate,
      transport: natsAlone,
      hookd: natsHookd,
      ratio: natsHookd / natsDirectRate,
    };
  } finally {
    await jsm.streams.delete(stream).catch(() => false);
    await nc.close();
    await sub.endAsync();
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
