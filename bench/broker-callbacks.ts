/**
 * Callbacks per second to a message broker through hookd, beside the broker's own client
 * publishing the same messages directly (a ratio, one run per transport). Direct: amqplib on a
 * confirm channel (persistent, mandatory, waiting for every confirm) and node-redis `XADD`, with
 * the same body and Standard Webhooks headers, 64 in flight. Through hookd: requests proxied to
 * an upstream, each firing a hook whose Callback is the broker URL with `$1` in the routing key or
 * stream key, 64 requests in flight; the time runs from the first request until the consumer has
 * every message.
 *
 *   node dist/bench/broker-callbacks.js [messages=5000]
 */
import { rmSync } from 'node:fs';
import { connect } from 'amqplib';
import { createClient } from 'redis';
import { newSigningSecret, secretKey, signatureHeader } from '../src/signing/index.js';
import { startHookd, startUpstream, tempDir } from './lib/peers.js';
import { sleep } from './lib/process.js';

const N = Number(process.argv[2] ?? 5000);
const WINDOW = 64;
const BODY = '{"path": "/repositories/r1/timeseries/ts1"}';
const SECRET = newSigningSecret();

function signedHeaders(i: number): Record<string, string> {
  const id = `msg_bench${i}`;
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

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

async function amqpDirect(queue: string, received: () => number): Promise<number> {
  const model = await connect('amqp://guest:guest@127.0.0.1:5672');
  const ch = await model.createConfirmChannel();
  const start = received();
  const t0 = performance.now();
  await windowed(N, (i) => {
    const headers = signedHeaders(i);
    return new Promise<void>((resolve, reject) =>
      ch.publish(
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
  await until('the direct messages', () => received() - start >= N);
  const s = (performance.now() - t0) / 1000;
  await model.close();
  return N / s;
}

async function redisDirect(stream: string): Promise<number> {
  const c = createClient({ socket: { host: '127.0.0.1', port: 6379 } });
  await c.connect();
  const t0 = performance.now();
  await windowed(N, (i) =>
    c.sendCommand(['XADD', stream, '*', 'body', BODY, ...Object.entries(signedHeaders(i)).flat()]),
  );
  const s = (performance.now() - t0) / 1000;
  c.destroy();
  return N / s;
}

async function throughHookd(callback: string, done: () => Promise<boolean>): Promise<number> {
  const upstream = await startUpstream(undefined);
  const dataDir = tempDir('broker');
  const hookd = await startHookd({
    core: undefined,
    dataDir,
    upstream: upstream.url,
    extraArgs: ['--callback-schemes', 'http,https,amqp,redis'],
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

async function main(): Promise<void> {
  const admin = await connect('amqp://guest:guest@127.0.0.1:5672');
  const ch = await admin.createChannel();
  const prefix = `hookd-bench-${process.pid}`;
  const queue = `${prefix}-ts1`;
  await ch.assertQueue(queue, { durable: false });
  let received = 0;
  await ch.consume(queue, () => received++, { noAck: true });
  const redis = createClient({ socket: { host: '127.0.0.1', port: 6379 } });
  await redis.connect();
  const stream = `hookd:bench:${process.pid}`;
  const results: Record<string, { direct: number; hookd: number; ratio: number }> = {};
  try {
    const amqpDirectRate = await amqpDirect(queue, () => received);
    const before = received;
    const amqpHookd = await throughHookd(
      `amqp://guest:guest@127.0.0.1:5672/%2F?routing_key=${prefix}-$1`,
      async () => received - before >= N,
    );
    results.amqp = { direct: amqpDirectRate, hookd: amqpHookd, ratio: amqpHookd / amqpDirectRate };

    const redisDirectRate = await redisDirect(`${stream}:direct`);
    const redisHookd = await throughHookd(
      `redis://127.0.0.1:6379/0?stream=${stream}:$1`,
      async () => (await redis.xLen(`${stream}:ts1`)) >= N,
    );
    results.redis = { direct: redisDirectRate, hookd: redisHookd, ratio: redisHookd / redisDirectRate };
  } finally {
    await ch.deleteQueue(queue);
    await admin.close();
    await redis.del([`${stream}:direct`, `${stream}:ts1`]);
    redis.destroy();
  }
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `${name}: direct ${r.direct.toFixed(0)} msg/s, through hookd ${r.hookd.toFixed(0)} callbacks/s, ratio ${r.ratio.toFixed(2)}`,
    );
  }
  console.log(JSON.stringify({ messages: N, window: WINDOW, results }));
}

await main();
