/**
 * Callbacks per second to each message broker through hookd, beside the broker's own client
 * publishing the same messages directly (a ratio, one run per transport), and beside the
 * transport module alone (`send` through the Transport interface, no proxy, no outbox), which
 * says how much of the gap is the transport and how much the rest of hookd.
 *
 * Direct, 64 in flight, the same body and Standard Webhooks headers, every acknowledgement
 * awaited: amqplib on a confirm channel (persistent, mandatory), node-redis `XADD`, mqtt.js QoS 1
 * (headers as user properties), nats.js to JetStream (`Nats-Msg-Id` and headers). Through hookd:
 * requests, each firing a hook whose Callback is the broker URL with `$1`
 * in the routing key, stream key, topic or subject, fed as `POST /_hookd/report` of 100 requests (so
 * that the rate is delivery's, not the proxy's); the time runs from the first report until the
 * consumer has every message, and hookd's CPU per callback is read from /proc beside that of an
 * HTTP callback fed the same way.
 *
 *   node dist/bench/broker-callbacks.js [messages=5000] [brokers=amqp,redis,mqtt,nats] [rounds=1]
 */
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
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
import { tempDir } from './lib/peers.js';
import { cpuSeconds, sleep } from './lib/process.js';
import { startQuietHookd } from './lib/quiet-hookd.js';
import { fmt, table } from './lib/stats.js';

/** Messages per figure; set by runBrokerBench. */
let N = 5000;
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

/**
 * How long a stage may go without one more message acknowledged or arrived before it fails: a
 * stalled round names its broker, its stage and how far it got instead of waiting for ever.
 */
const STALL_MS = 30_000;

/** `what` as the error of a stalled stage says it: how many of how many, and for how long none. */
function stalled(what: string, got: number, want: number, noun: string): Error {
  return new Error(`${what} stalled: ${got} of ${want} ${noun}, none for ${STALL_MS / 1000} s`);
}

/**
 * Runs `task(i)` for i in [0, n) with at most WINDOW at once; resolves when all are done, and
 * rejects, naming `what`, when none has finished for STALL_MS (an acknowledgement that never
 * comes): the caller's cleanup then closes the client the tasks wait on.
 */
async function windowed(what: string, n: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  let finished = 0;
  let timer: NodeJS.Timeout | undefined;
  const watch = new Promise<never>((_, reject) => {
    let seen = -1;
    timer = setInterval(() => {
      if (finished === seen) reject(stalled(what, finished, n, 'acknowledged'));
      seen = finished;
    }, STALL_MS);
  });
  const work = Promise.all(
    Array.from({ length: WINDOW }, async () => {
      while (next < n) {
        await task(next++);
        finished++;
      }
    }),
  );
  // After a stall the tasks fail once their client is closed: that is the stall's, already told.
  work.catch(() => undefined);
  try {
    await Promise.race([work, watch]);
  } finally {
    clearInterval(timer);
  }
}

/**
 * Waits until `count()` reaches `want`; rejects, naming `what` and the count received, when it
 * has not grown for STALL_MS.
 */
async function arrived(what: string, want: number, count: () => number | Promise<number>): Promise<void> {
  let got = await count();
  let moved = Date.now();
  while (got < want) {
    await sleep(5);
    const now = await count();
    if (now > got) {
      got = now;
      moved = Date.now();
    } else if (Date.now() - moved > STALL_MS) throw stalled(what, got, want, 'received');
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
      try {
        const confirm = await model.createConfirmChannel();
        const start = received;
        const t0 = performance.now();
        await windowed('amqp direct', N, (i) => {
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
        await arrived('amqp direct', N, () => received - start);
        return N / ((performance.now() - t0) / 1000);
      } finally {
        await model.close().catch(() => undefined);
      }
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
      await windowed('redis direct', N, (i) =>
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
  // QoS 0 to the counting consumer: Mosquitto holds at most 1000 QoS 1 messages (20 in flight)
  // for a subscriber that falls behind and drops the rest unannounced, while the publisher has
  // every PUBACK from the broker; a consumer a few seconds late then never counts N. To an online
  // subscriber QoS 0 messages are written without that bound. The legs measured keep QoS 1.
  await sub.subscribeAsync(`${BASE}/#`, { qos: 0 });
  const count = async () => received;
  return {
    name: 'mqtt',
    module: mqttTransport,
    async direct() {
      const c = await mqtt.connectAsync('mqtt://127.0.0.1:1883', { protocolVersion: 5 });
      try {
        const start = received;
        const t0 = performance.now();
        await windowed('mqtt direct', N, (i) =>
          c.publishAsync(`${BASE}/direct/read`, BODY, {
            qos: 1,
            properties: { contentType: 'application/json', userProperties: signedHeaders(i) },
          }),
        );
        await arrived('mqtt direct', N, () => received - start);
        return N / ((performance.now() - t0) / 1000);
      } finally {
        // Forced: after a stall, PUBACKs still awaited would keep a graceful end waiting.
        await c.endAsync(true);
      }
    },
    aloneUrl: `mqtt://127.0.0.1:1883/${BASE}/alone/read`,
    hookdUrl: `mqtt://127.0.0.1:1883/${BASE}/$1/read`,
    aloneCount: count,
    hookdCount: count,
    cleanup: () => sub.endAsync(true),
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
      await windowed('nats direct', N, (i) => {
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

/** `count()`: the messages for `url` the consumer has had since the call. */
async function transportAlone(
  what: string,
  module: TransportModule,
  url: string,
  count: () => Promise<number>,
): Promise<number> {
  const t = module.create({
    policy: new AddressPolicy(['127.0.0.0/8']),
    lookup: undefined,
    timeoutMs: 15_000,
    connectTimeoutMs: 10_000,
    perReceiver: WINDOW,
    log: () => {},
  });
  try {
    const t0 = performance.now();
    await windowed(what, N, async (i) => {
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
    await arrived(what, N, count);
    return N / ((performance.now() - t0) / 1000);
  } finally {
    await t.close();
  }
}

/** Requests per `POST /_hookd/report`, as the queue bench feeds hookd: the rate is delivery's. */
const BATCH = 100;

/**
 * Callbacks/s and hookd's CPU µs per callback for a hook whose Callback is `callback`, fed as
 * reports of BATCH requests (4 reports in flight), from the first report until `count()` (the
 * callbacks had since the call) has every one; `what` names the stage when it stalls.
 */
async function throughHookd(
  what: string,
  callback: string,
  n: number,
  count: () => number | Promise<number>,
): Promise<{ perSecond: number; cpuUs: number }> {
  const dataDir = tempDir('broker');
  const hookd = await startQuietHookd({
    dataDir,
    extraArgs: ['--callback-schemes', 'http,https,amqp,redis,mqtt,nats'],
  });
  const auth = { authorization: `Bearer ${hookd.token}`, 'content-type': 'application/json' };
  try {
    const res = await fetch(`${hookd.url}/hooks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        PathPattern: '/repositories/*/timeseries/(*)',
        Methods: ['POST'],
        Type: 1,
        Callback: callback,
        CallbackContent: '{"path": "$REQUEST_PATH"}',
      }),
    });
    if (res.status !== 201) throw new Error(`creating the hook: ${res.status} ${await res.text()}`);
    const batch = JSON.stringify(
      Array.from({ length: BATCH }, () => ({
        Method: 'POST',
        Path: '/repositories/r1/timeseries/ts1',
        StatusCode: 201,
      })),
    );
    const cpu0 = cpuSeconds(hookd.running.pid);
    const t0 = performance.now();
    let next = 0;
    const batches = Math.ceil(n / BATCH);
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < batches) {
          next++;
          const r = await fetch(`${hookd.url}/_hookd/report`, { method: 'POST', headers: auth, body: batch });
          if (r.status !== 202) throw new Error(`report answered ${r.status}: ${await r.text()}`);
        }
      }),
    );
    await arrived(what, n, count);
    const s = (performance.now() - t0) / 1000;
    const sent = batches * BATCH;
    return { perSecond: sent / s, cpuUs: ((cpuSeconds(hookd.running.pid) - cpu0) * 1e6) / sent };
  } finally {
    await hookd.running.stop(15_000);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The HTTP callback the broker rows are held against: a receiver answering 200 at once. */
async function httpReceiver(): Promise<{ url: string; count(): number; close(): Promise<void> }> {
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    count: () => count,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const MAKERS: Record<string, () => Promise<Broker>> = {
  amqp: amqpBroker,
  redis: redisBroker,
  mqtt: mqttBroker,
  nats: natsBroker,
};

export interface BrokerRow {
  broker: string;
  /** The broker's own client publishing the same messages, msg/s (median of the rounds). */
  direct: number;
  /** The transport module alone (no proxy, no outbox), msg/s. */
  transport: number;
  /** Through hookd, fed as reports, callbacks/s. */
  hookd: number;
  /** hookd's CPU µs per callback. */
  cpuUs: number;
  /** hookd / direct. */
  ratio: number;
  /** cpuUs / the HTTP callback's cpuUs in the same rounds. */
  cpuVsHttp: number;
}

export interface BrokerBenchResult {
  messages: number;
  rounds: number;
  http: { perSecond: number; cpuUs: number };
  rows: BrokerRow[];
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Rounds interleave the HTTP callback and each broker's three figures; medians are kept. */
export async function runBrokerBench(opts: {
  messages: number;
  brokers: string[];
  rounds: number;
  log?: (line: string) => void;
}): Promise<BrokerBenchResult> {
  N = opts.messages;
  const log = opts.log ?? (() => undefined);
  const http: { perSecond: number; cpuUs: number }[] = [];
  const per = new Map<string, { direct: number; transport: number; hookd: number; cpuUs: number }[]>();
  const rx = await httpReceiver();
  try {
    for (let r = 0; r < opts.rounds; r++) {
      const base = rx.count();
      http.push(await throughHookd('HTTP through hookd', rx.url, N, () => rx.count() - base));
      for (const name of opts.brokers) {
        const make = MAKERS[name];
        if (make === undefined)
          throw new Error(`unknown broker ${name} (known: ${Object.keys(MAKERS).join(',')})`);
        const b = await make();
        try {
          const direct = await b.direct();
          let before = await b.aloneCount();
          const transport = await transportAlone(
            `${name} transport alone`,
            b.module,
            b.aloneUrl,
            async () => (await b.aloneCount()) - before,
          );
          before = await b.hookdCount();
          const through = await throughHookd(
            `${name} through hookd`,
            b.hookdUrl,
            N,
            async () => (await b.hookdCount()) - before,
          );
          const list = per.get(name) ?? [];
          list.push({ direct, transport, hookd: through.perSecond, cpuUs: through.cpuUs });
          per.set(name, list);
          log(
            `  round ${r + 1}: ${name} direct ${direct.toFixed(0)}/s, alone ${transport.toFixed(0)}/s, ` +
              `hookd ${through.perSecond.toFixed(0)}/s at ${through.cpuUs.toFixed(0)} µs (HTTP ${http.at(-1)!.cpuUs.toFixed(0)} µs)`,
          );
        } finally {
          await b.cleanup();
        }
      }
    }
  } finally {
    await rx.close();
  }
  const httpCpu = median(http.map((h) => h.cpuUs));
  return {
    messages: N,
    rounds: opts.rounds,
    http: { perSecond: median(http.map((h) => h.perSecond)), cpuUs: httpCpu },
    rows: [...per].map(([broker, xs]) => {
      const m = (f: (x: (typeof xs)[number]) => number) => median(xs.map(f));
      return {
        broker,
        direct: m((x) => x.direct),
        transport: m((x) => x.transport),
        hookd: m((x) => x.hookd),
        cpuUs: m((x) => x.cpuUs),
        ratio: median(xs.map((x) => x.hookd / x.direct)),
        cpuVsHttp: median(xs.map((x, i) => x.cpuUs / http[i]!.cpuUs)),
      };
    }),
  };
}

export function formatBrokerBench(r: BrokerBenchResult): string {
  return [
    table(
      [
        'broker',
        'own client msg/s',
        'transport alone msg/s',
        'through hookd callbacks/s',
        '× own client',
        'hookd CPU µs/callback',
        '× HTTP callback',
      ],
      r.rows.map((x) => [
        x.broker,
        fmt(x.direct, 0),
        fmt(x.transport, 0),
        fmt(x.hookd, 0),
        `${fmt(x.ratio, 2)}×`,
        fmt(x.cpuUs, 0),
        `${fmt(x.cpuVsHttp, 2)}×`,
      ]),
    ),
    '',
    `${r.messages} messages per figure, ${r.rounds} interleaved rounds (medians); triggers fed as reports of ${BATCH} requests; ` +
      `an HTTP callback through hookd the same way: ${fmt(r.http.perSecond, 0)}/s at ${fmt(r.http.cpuUs, 0)} µs CPU.`,
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const r = await runBrokerBench({
    messages: Number(process.argv[2] ?? 5000),
    brokers: (process.argv[3] ?? 'amqp,redis,mqtt,nats').split(','),
    rounds: Number(process.argv[4] ?? 1),
    log: (l) => console.log(l),
  });
  console.log(formatBrokerBench(r));
  console.log(JSON.stringify(r));
}
