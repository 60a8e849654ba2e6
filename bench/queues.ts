/**
 * Queue peers: what a Node user would pick instead of a webhook daemon is a job queue
 * plus a worker that POSTs. This bench delivers the same callbacks through
 *
 *   - raw undici `Pool.request` (no queue: the ceiling),
 *   - hookd on SQLite (`Persist: true`) and in memory (`Persist: false`), triggered through
 *     `POST /_hookd/report` in batches of 100,
 *   - hookd on PostgreSQL (one instance),
 *   - BullMQ on Redis, pg-boss and graphile-worker on PostgreSQL, each with a worker process that
 *     POSTs through an undici Pool with hookd's concurrency (64) and completes a job only after a 2xx,
 *
 * to one receiver (a child process answering 200 at once). Every contender gets the same producer:
 * batches of 100, four in flight. Measured per contender: callbacks/s (first enqueue to last
 * arrival), whole-system CPU per callback (producer + worker or hookd + the Redis or PostgreSQL
 * server processes; the receiver is not counted), and the trigger → receiver latency at a fixed
 * rate (10 ms ticks). Rounds are interleaved; results are medians.
 *
 * Durability differs and is part of the comparison: Redis here keeps nothing on disk, hookd's
 * SQLite runs WAL with `synchronous=NORMAL` (survives a crash of hookd, may lose the last commits
 * on power loss), PostgreSQL fsyncs every commit.
 *
 * Run: `node dist/bench/queues.js [--callbacks 20000 --warmup 2000 --rounds 5 --rate 1000 --seconds 5]
 * [--only raw,bullmq] [--baseline OTHER/bin/hookd.js]`.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Pool } from 'undici';
import { redactDatabaseUrl } from '../src/config/load-config.js';
import { tempDir } from './lib/peers.js';
import { withAdmin } from './lib/pg-admin.js';
import { cpuByComm, cpuSeconds, sleep } from './lib/process.js';
import { startQuietHookd } from './lib/quiet-hookd.js';
import { fmt, table } from './lib/stats.js';

export interface QueueBenchOptions {
  callbacks: number;
  warmup: number;
  rounds: number;
  /** Callbacks per second of the latency run. */
  rate: number;
  /** Length of the latency run, s. */
  seconds: number;
  /** In-flight POSTs of every sender (hookd's default per-destination limit is of this order). */
  connections: number;
  redisUrl: string;
  databaseUrl: string;
  /** Contenders to run (default all that can run here). */
  only?: string[];
  /** Run the hookd contenders under `node --cpu-prof`, writing profiles into this directory. */
  profileDir?: string;
  /**
   * Another build's bin/hookd.js: each hookd contender chosen runs again with it, right after
   * itself in every round, as `… [baseline]` (a before/after comparison in one interleaved run).
   */
  baselineBin?: string;
  log: (line: string) => void;
}

export const DEFAULT_QUEUE_OPTIONS: Omit<QueueBenchOptions, 'log'> = {
  callbacks: 20_000,
  warmup: 2_000,
  rounds: 5,
  rate: 1000,
  seconds: 5,
  connections: 64,
  redisUrl: process.env.HOOKD_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  databaseUrl: process.env.HOOKD_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
};

export interface ContenderResult {
  name: string;
  /** Why it did not run, when it did not. */
  skipped?: string;
  perSecond: number;
  min: number;
  max: number;
  cpuUsPerCallback: number;
  /** Of which the Redis or PostgreSQL server processes. */
  serverCpuUs: number;
  p50: number;
  p99: number;
  settings: string;
  /**
   * Every throughput round (a collapsed round must show), and for hookd's contenders
   * the paced p99 of a latency run made in that round.
   */
  rounds?: { perSecond: number; cpuUs: number; p99?: number }[];
  /** Slowest round's callbacks/s over the median's. */
  slowestVsMedian?: number;
}

export interface QueueBenchResult {
  options: Omit<QueueBenchOptions, 'log' | 'databaseUrl' | 'redisUrl'> & { database: string; redis: string };
  contenders: ContenderResult[];
}

const BATCH = 100;
const IN_FLIGHT = 4;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const wallMs = (): number => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------------------------------------
// Child processes: the receiver, and the queue workers

/** The receiver: counts arrivals and, for bodies `{"t": wall-ms}`, how long they took. */
function runReceiver(): void {
  let count = 0;
  let latencies: number[] = [];
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      count++;
      const m = /"t"\s*:\s*"?([\d.]+)/.exec(Buffer.concat(chunks).toString());
      if (m) latencies.push(wallMs() - Number(m[1]));
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
    });
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  process.on('message', (m: { cmd: string }) => {
    if (m.cmd === 'count') process.send!({ count });
    else if (m.cmd === 'latencies') {
      process.send!({ latencies });
      latencies = [];
    }
  });
  process.on('disconnect', () => process.exit(0));
}

type Kind = 'bullmq' | 'pgboss' | 'graphile';
const QUEUE = 'hookd-bench';

/** A worker that POSTs each job's body to the receiver and completes it only after a 2xx. */
async function runQueueWorker(
  kind: Kind,
  receiverUrl: string,
  conn: string,
  connections: number,
): Promise<void> {
  const pool = new Pool(receiverUrl, { connections });
  const headers = { 'content-type': 'application/json', 'user-agent': 'queue-bench' };
  const post = async (body: unknown): Promise<void> => {
    const r = await pool.request({ path: '/hook', method: 'POST', headers, body: JSON.stringify(body) });
    await r.body.dump();
    if (r.statusCode < 200 || r.statusCode > 299) throw new Error(`receiver answered ${r.statusCode}`);
  };
  let stop: () => Promise<void>;
  if (kind === 'bullmq') {
    const { Worker } = await import('bullmq');
    const u = new URL(conn);
    const worker = new Worker(QUEUE, async (job) => post(job.data), {
      connection: { host: u.hostname, port: Number(u.port || 6379), maxRetriesPerRequest: null },
      concurrency: connections,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 1000 },
    });
    await worker.waitUntilReady();
    stop = () => worker.close();
  } else if (kind === 'pgboss') {
    const { PgBoss } = await import('pg-boss');
    const boss = new PgBoss({ connectionString: conn, max: 4, supervise: false, schedule: false });
    // Dropping the throw-away database ends its connections: heard here, not a crash.
    boss.on('error', () => undefined);
    await boss.start();
    // pg-boss's fastest documented shape: fetch big batches, poll at its minimum interval, two
    // workers so one fetches while the other sends.
    for (let i = 0; i < 2; i++) {
      await boss.work(QUEUE, { batchSize: 2000, pollingIntervalSeconds: 0.5 }, async (jobs) => {
        await Promise.all(jobs.map((j) => post(j.data)));
      });
    }
    stop = () => boss.stop({ graceful: false });
  } else {
    const { run, Logger } = await import('graphile-worker');
    const runner = await run({
      noHandleSignals: true,
      // A line per job would be part of what is measured (hookd runs at warn for the same reason).
      logger: new Logger(() => () => undefined),
      taskList: { post: async (payload) => post(payload) },
      preset: {
        worker: {
          connectionString: conn,
          concurrentJobs: connections,
          maxPoolSize: connections + 2,
          pollInterval: 500,
          localQueue: { size: connections + 1 },
        },
      },
    });
    stop = () => runner.stop();
  }
  process.send!({ ready: true });
  process.on('message', async (m: { cmd: string }) => {
    if (m.cmd === 'stop') {
      await stop().catch(() => undefined);
      await pool.close();
      process.exit(0);
    }
  });
  process.on('disconnect', () => process.exit(0));
}

interface Child {
  child: ChildProcess;
  request<T>(cmd: string, key: string): Promise<T>;
}

async function forkSelf(args: string[]): Promise<{ child: ChildProcess; first: Record<string, unknown> }> {
  const child = fork(fileURLToPath(import.meta.url), args, { execArgv: [], stdio: 'inherit' });
  const first = await new Promise<Record<string, unknown>>((res, rej) => {
    child.once('message', (m: Record<string, unknown>) => res(m));
    child.once('exit', (code) => rej(new Error(`${args[0]} exited with ${code}`)));
  });
  return { child, first };
}

const asked = (child: ChildProcess) =>
  function request<T>(cmd: string, key: string): Promise<T> {
    return new Promise<T>((res) => {
      const on = (m: Record<string, unknown>) => {
        if (key in m) {
          child.off('message', on);
          res(m[key] as T);
        }
      };
      child.on('message', on);
      child.send({ cmd });
    });
  };

// ---------------------------------------------------------------------------------------------
// Whole-system CPU

interface CpuMark {
  self: NodeJS.CpuUsage;
  pids: Map<number, number>;
  servers: Map<number, number>;
}

// ---------------------------------------------------------------------------------------------
// Contenders

interface Rig {
  /** Enqueues (or reports) these callbacks; resolves when the system accepted them. */
  enqueue(ts: number[]): Promise<void>;
  /** Worker or hookd processes whose CPU counts. */
  pids(): number[];
  /** The server processes' command name (redis-server, postgres), if any. */
  server?: string;
  close(): Promise<void>;
}

interface Contender {
  name: string;
  settings: string;
  skip?: (opts: QueueBenchOptions) => Promise<string | undefined>;
  setup(receiverUrl: string, opts: QueueBenchOptions): Promise<Rig>;
  /** The same contender on another build (hookd's only). */
  twin?: (bin: string) => Contender;
}

async function pgSkip(opts: QueueBenchOptions): Promise<string | undefined> {
  try {
    await withAdmin(opts.databaseUrl, (c) => c.query('SELECT 1'));
    return undefined;
  } catch (err) {
    return `PostgreSQL not reachable at ${redactDatabaseUrl(opts.databaseUrl)} (${(err as Error).message}); set HOOKD_BENCH_DATABASE_URL`;
  }
}

async function redisSkip(opts: QueueBenchOptions): Promise<string | undefined> {
  const { Socket } = await import('node:net');
  const u = new URL(opts.redisUrl);
  return new Promise((res) => {
    const s = new Socket();
    const done = (why?: string) => {
      s.destroy();
      res(why);
    };
    s.setTimeout(2000, () => done(`Redis not reachable at ${u.host} (timeout); set HOOKD_BENCH_REDIS_URL`));
    s.once('error', (err) =>
      done(`Redis not reachable at ${u.host} (${err.message}); set HOOKD_BENCH_REDIS_URL`),
    );
    s.connect(Number(u.port || 6379), u.hostname, () => done(undefined));
  });
}

/** A throw-away database on the bench's PostgreSQL server. */
async function freshDatabase(opts: QueueBenchOptions): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `hookd_bench_q_${Math.random().toString(36).slice(2, 10)}`;
  await withAdmin(opts.databaseUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const u = new URL(opts.databaseUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: () =>
      withAdmin(opts.databaseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}

const body = (t: number) => ({ t: t.toFixed(3), note: 'x'.repeat(200) });

const raw: Contender = {
  name: 'raw undici Pool, no queue',
  settings: 'Pool.request, 64 connections, in the producer process',
  async setup(receiverUrl, opts) {
    const pool = new Pool(receiverUrl, { connections: opts.connections });
    const headers = { 'content-type': 'application/json' };
    return {
      enqueue: async (ts) => {
        await Promise.all(
          ts.map(async (t) => {
            const r = await pool.request({
              path: '/hook',
              method: 'POST',
              headers,
              body: JSON.stringify(body(t)),
            });
            await r.body.dump();
          }),
        );
      },
      pids: () => [],
      close: () => pool.close(),
    };
  },
};

/** Keys of the ordered contender; each key's callbacks go out one at a time. */
const ORDER_KEYS = 64;

function hookdContender(
  name: string,
  persist: boolean,
  postgres: boolean,
  ordered = false,
  bin?: string,
): Contender {
  return {
    name,
    twin: (b) => hookdContender(`${name} [baseline]`, persist, postgres, ordered, b),
    settings: postgres
      ? 'one instance, --database-url, POST /_hookd/report batches of 100'
      : `SQLite WAL synchronous=NORMAL, Persist: ${persist}${ordered ? `, Ordering {"Key":"$1"} over ${ORDER_KEYS} keys` : ''}, POST /_hookd/report batches of 100`,
    skip: postgres ? pgSkip : undefined,
    async setup(receiverUrl, opts) {
      const dataDir = tempDir('queues');
      const db = postgres ? await freshDatabase(opts) : undefined;
      const hookd = await startQuietHookd({
        dataDir,
        ...(db && { databaseUrl: db.url }),
        ...(opts.profileDir && { profileDir: opts.profileDir }),
        ...(bin && { bin }),
      });
      const auth = { authorization: `Bearer ${hookd.token}`, 'content-type': 'application/json' };
      const created = await fetch(`${hookd.url}/hooks`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          // The ordered contender renders its key from the first segment, the time from the second.
          PathPattern: ordered ? '/q/(*)/(*)' : '/q/(*)',
          Methods: ['POST'],
          Callback: `${receiverUrl}/hook`,
          CallbackContent: `{"t":"${ordered ? '$2' : '$1'}","note":"${'x'.repeat(200)}"}`,
          Persist: persist,
          ...(ordered && { Ordering: { Key: '$1' } }),
        }),
      });
      if (created.status !== 201)
        throw new Error(`hook not created: ${created.status} ${await created.text()}`);
      const api = new Pool(hookd.url, { connections: IN_FLIGHT });
      let n = 0;
      const path = (t: number) =>
        ordered ? `/q/k${n++ % ORDER_KEYS}/${t.toFixed(3)}` : `/q/${t.toFixed(3)}`;
      return {
        enqueue: async (ts) => {
          const items = ts.map((t) => ({ Method: 'POST', Path: path(t), StatusCode: 200 }));
          const r = await api.request({
            path: '/_hookd/report',
            method: 'POST',
            headers: auth,
            body: JSON.stringify(items),
          });
          const text = await r.body.text();
          if (r.statusCode !== 202) throw new Error(`report answered ${r.statusCode}: ${text}`);
        },
        pids: () => [hookd.running.pid],
        server: postgres ? 'postgres' : undefined,
        close: async () => {
          await api.close();
          await hookd.running.stop(15_000);
          await db?.drop();
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  };
}

function queueContender(kind: Kind, name: string, settings: string): Contender {
  const onRedis = kind === 'bullmq';
  return {
    name,
    settings,
    skip: onRedis ? redisSkip : pgSkip,
    async setup(receiverUrl, opts) {
      const db = onRedis ? undefined : await freshDatabase(opts);
      const conn = db?.url ?? opts.redisUrl;
      let enqueue: (ts: number[]) => Promise<void>;
      let closeProducer: () => Promise<void>;
      if (kind === 'bullmq') {
        const { Queue } = await import('bullmq');
        const u = new URL(conn);
        const queue = new Queue(QUEUE, { connection: { host: u.hostname, port: Number(u.port || 6379) } });
        await queue.obliterate({ force: true });
        enqueue = async (ts) => {
          await queue.addBulk(
            ts.map((t) => ({
              name: 'cb',
              data: body(t),
              opts: { removeOnComplete: true, removeOnFail: 1000 },
            })),
          );
        };
        closeProducer = () => queue.close();
      } else if (kind === 'pgboss') {
        const { PgBoss } = await import('pg-boss');
        const boss = new PgBoss({ connectionString: conn, max: 2, supervise: false, schedule: false });
        boss.on('error', () => undefined);
        await boss.start();
        await boss.createQueue(QUEUE);
        enqueue = async (ts) => {
          await boss.insert(
            QUEUE,
            ts.map((t) => ({ data: body(t) })),
          );
        };
        closeProducer = () => boss.stop({ graceful: false });
      } else {
        const { makeWorkerUtils, Logger } = await import('graphile-worker');
        // Our own pool, so that its idle connections close with it (and their errors when the
        // throw-away database is dropped are heard).
        const pgPool = new pg.Pool({ connectionString: conn, max: 4 });
        pgPool.on('error', () => undefined);
        const utils = await makeWorkerUtils({ pgPool, logger: new Logger(() => () => undefined) });
        await utils.migrate();
        enqueue = async (ts) => {
          await utils.addJobs(ts.map((t) => ({ identifier: 'post', payload: body(t) })));
        };
        closeProducer = async () => {
          await utils.release();
          await pgPool.end();
        };
      }
      const { child } = await forkSelf(['--queue-worker', kind, receiverUrl, conn, String(opts.connections)]);
      return {
        enqueue,
        pids: () => [child.pid!],
        server: onRedis ? 'redis-server' : 'postgres',
        close: async () => {
          child.send({ cmd: 'stop' });
          await new Promise((res) => child.once('exit', res));
          await closeProducer();
          await db?.drop();
        },
      };
    },
  };
}

export const CONTENDERS: readonly Contender[] = [
  raw,
  hookdContender('hookd, SQLite', true, false),
  hookdContender('hookd, Persist:false', false, false),
  hookdContender('hookd ordered, SQLite', true, false, true),
  hookdContender('hookd on PostgreSQL, 1 instance', true, true),
  queueContender(
    'bullmq',
    'BullMQ (Redis, no persistence)',
    'Worker concurrency 64, removeOnComplete, addBulk of 100',
  ),
  queueContender(
    'pgboss',
    'pg-boss',
    '2 workers × batchSize 2000, pollingIntervalSeconds 0.5 (its minimum), insert of 100',
  ),
  queueContender(
    'graphile',
    'graphile-worker',
    'concurrentJobs 64, localQueue 65, maxPoolSize 66, addJobs of 100',
  ),
];

// ---------------------------------------------------------------------------------------------
// Measurement

async function produce(rig: Rig, n: number, stamp: () => number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const k = Math.min(BATCH, n - next);
      next += k;
      await rig.enqueue(Array.from({ length: k }, stamp));
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}

async function waitFor(count: () => Promise<number>, target: number, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while ((await count()) < target) {
    if (Date.now() > end) throw new Error(`only ${await count()} of ${target} callbacks arrived in time`);
    await sleep(5);
  }
}

function mark(rig: Rig): CpuMark {
  return {
    self: process.cpuUsage(),
    pids: new Map(rig.pids().map((p) => [p, cpuSeconds(p)])),
    servers: rig.server ? cpuByComm(rig.server) : new Map(),
  };
}

function cpuSince(rig: Rig, m: CpuMark): { total: number; server: number } {
  const self = process.cpuUsage(m.self);
  let total = (self.user + self.system) / 1e6;
  for (const [p, before] of m.pids) total += cpuSeconds(p) - before;
  let server = 0;
  if (rig.server) for (const [p, now] of cpuByComm(rig.server)) server += now - (m.servers.get(p) ?? 0);
  return { total: total + server, server };
}

interface Round {
  perSecond: number;
  cpuUs: number;
  serverUs: number;
}

async function throughputRound(
  c: Contender,
  rx: Child,
  receiverUrl: string,
  opts: QueueBenchOptions,
): Promise<Round> {
  const rig = await c.setup(receiverUrl, opts);
  try {
    const count = () => rx.request<number>('count', 'count');
    const base = await count();
    await produce(rig, opts.warmup, () => 0);
    await waitFor(count, base + opts.warmup, 120_000);
    const m = mark(rig);
    const t0 = performance.now();
    await produce(rig, opts.callbacks, () => 0);
    await waitFor(count, base + opts.warmup + opts.callbacks, 300_000);
    const ms = performance.now() - t0;
    const cpu = cpuSince(rig, m);
    await rx.request('latencies', 'latencies');
    return {
      perSecond: (opts.callbacks / ms) * 1000,
      cpuUs: (cpu.total * 1e6) / opts.callbacks,
      serverUs: (cpu.server * 1e6) / opts.callbacks,
    };
  } finally {
    await rig.close();
  }
}

async function latencyRun(
  c: Contender,
  rx: Child,
  receiverUrl: string,
  opts: QueueBenchOptions,
): Promise<number[]> {
  const rig = await c.setup(receiverUrl, opts);
  try {
    const count = () => rx.request<number>('count', 'count');
    const base = await count();
    await produce(rig, Math.min(opts.warmup, 500), () => 0);
    await waitFor(count, base + Math.min(opts.warmup, 500), 120_000);
    await rx.request('latencies', 'latencies');
    const perTick = Math.max(1, Math.round(opts.rate / 100));
    const ticks = Math.max(1, Math.round(opts.seconds * 100));
    const start = performance.now();
    const pending: Promise<void>[] = [];
    for (let tick = 0; tick < ticks; tick++) {
      const wait = start + tick * 10 - performance.now();
      if (wait > 0) await sleep(wait);
      const t = wallMs();
      pending.push(rig.enqueue(Array.from({ length: perTick }, () => t)));
    }
    await Promise.all(pending);
    await waitFor(count, base + Math.min(opts.warmup, 500) + perTick * ticks, 120_000);
    return (await rx.request<number[]>('latencies', 'latencies')).sort((a, b) => a - b);
  } finally {
    await rig.close();
  }
}

/** Runs the queue comparison; contenders whose service is absent are skipped with the reason. */
export async function runQueueBench(partial: Partial<QueueBenchOptions> = {}): Promise<QueueBenchResult> {
  const opts: QueueBenchOptions = { ...DEFAULT_QUEUE_OPTIONS, log: () => undefined, ...partial };
  const { child, first } = await forkSelf(['--receiver']);
  const receiverUrl = `http://127.0.0.1:${first.port as number}`;
  const rx: Child = { child, request: asked(child) };
  const chosen = CONTENDERS.filter(
    (c) => !opts.only || opts.only.some((o) => c.name.toLowerCase().includes(o)),
  ).flatMap((c) => (opts.baselineBin && c.twin ? [c, c.twin(opts.baselineBin)] : [c]));
  const skipped = new Map<string, string>();
  for (const c of chosen) {
    const why = await c.skip?.(opts);
    if (why) {
      skipped.set(c.name, why);
      opts.log(`queues: skipping ${c.name}: ${why}`);
    }
  }
  const runnable = chosen.filter((c) => !skipped.has(c.name));
  const rounds = new Map<string, Round[]>(runnable.map((c) => [c.name, []]));
  // hookd's own contenders get a paced run in every round: a round that collapses must show in p99 too.
  const paced = new Map<string, number[][]>(runnable.map((c) => [c.name, []]));
  const everyRound = (c: Contender) => c.name.startsWith('hookd');
  try {
    for (let r = 0; r < opts.rounds; r++) {
      for (const c of runnable) {
        const m = await throughputRound(c, rx, receiverUrl, opts);
        rounds.get(c.name)!.push(m);
        let p99 = '';
        if (everyRound(c)) {
          const lat = await latencyRun(c, rx, receiverUrl, opts);
          paced.get(c.name)!.push(lat);
          p99 = `, paced p99 ${fmt(percentile(lat, 99), 2)} ms`;
        }
        opts.log(
          `queues: round ${r + 1} ${c.name}: ${fmt(m.perSecond, 0)}/s, ${fmt(m.cpuUs, 0)} µs CPU${p99}`,
        );
      }
    }
    const contenders: ContenderResult[] = [];
    for (const c of chosen) {
      const why = skipped.get(c.name);
      if (why) {
        contenders.push({
          name: c.name,
          skipped: why,
          perSecond: Number.NaN,
          min: Number.NaN,
          max: Number.NaN,
          cpuUsPerCallback: Number.NaN,
          serverCpuUs: Number.NaN,
          p50: Number.NaN,
          p99: Number.NaN,
          settings: c.settings,
        });
        continue;
      }
      const perRound = paced.get(c.name)!;
      const lat =
        perRound.length > 0
          ? perRound.flat().sort((a, b) => a - b)
          : await latencyRun(c, rx, receiverUrl, opts);
      const rs = rounds.get(c.name)!;
      const med = median(rs.map((x) => x.perSecond));
      contenders.push({
        rounds: rs.map((x, i) => ({
          perSecond: x.perSecond,
          cpuUs: x.cpuUs,
          ...(perRound[i] && { p99: percentile(perRound[i]!, 99) }),
        })),
        slowestVsMedian: Math.min(...rs.map((x) => x.perSecond)) / med,
        name: c.name,
        settings: c.settings,
        perSecond: median(rs.map((x) => x.perSecond)),
        min: Math.min(...rs.map((x) => x.perSecond)),
        max: Math.max(...rs.map((x) => x.perSecond)),
        cpuUsPerCallback: median(rs.map((x) => x.cpuUs)),
        serverCpuUs: median(rs.map((x) => x.serverUs)),
        p50: percentile(lat, 50),
        p99: percentile(lat, 99),
      });
    }
    const { log: _log, databaseUrl, redisUrl, ...rest } = opts;
    return { options: { ...rest, database: redactDatabaseUrl(databaseUrl), redis: redisUrl }, contenders };
  } finally {
    child.disconnect();
  }
}

/** The comparison as a Markdown table, ratios against BullMQ, pg-boss and the raw ceiling. */
export function formatQueueBench(r: QueueBenchResult): string {
  const by = (n: string) => r.contenders.find((c) => c.name.startsWith(n) && !c.skipped);
  const rawC = by('raw');
  const rows = r.contenders.map((c) =>
    c.skipped
      ? [c.name, 'skipped', '', '', c.skipped]
      : [
          c.name,
          `${fmt(c.perSecond, 0)} (${fmt(c.min, 0)}–${fmt(c.max, 0)})`,
          `${fmt(c.cpuUsPerCallback, 0)}${c.serverCpuUs > 0 ? ` (server ${fmt(c.serverCpuUs, 0)})` : ''}`,
          `${fmt(c.p50, 2)} / ${fmt(c.p99, 2)}`,
          c.settings,
        ],
  );
  const lines = [
    table(
      [
        'contender',
        'callbacks/s (min–max)',
        'CPU µs per callback',
        `p50 / p99 ms at ${r.options.rate}/s`,
        'settings',
      ],
      rows,
    ),
    '',
  ];
  const ratio = (
    a?: ContenderResult,
    b?: ContenderResult,
    f: (c: ContenderResult) => number = (c) => c.perSecond,
  ) => (a && b ? `${fmt(f(a) / f(b), 2)}×` : 'n/a');
  for (const name of ['hookd, SQLite', 'hookd on PostgreSQL']) {
    const h = by(name);
    if (!h) continue;
    lines.push(
      `- ${h.name}: ${ratio(h, by('BullMQ'))} BullMQ's callbacks/s at ${ratio(h, by('BullMQ'), (c) => c.cpuUsPerCallback)} its CPU; ` +
        `${ratio(h, by('pg-boss'))} pg-boss's at ${ratio(h, by('pg-boss'), (c) => c.cpuUsPerCallback)} its CPU; ` +
        `${ratio(h, rawC)} of the raw ceiling.`,
    );
  }
  for (const c of r.contenders) {
    if (c.skipped || !c.rounds || !c.name.startsWith('hookd')) continue;
    const each = c.rounds
      .map(
        (x, i) =>
          `${i + 1}: ${fmt(x.perSecond, 0)}/s, ${fmt(x.cpuUs, 0)} µs${x.p99 !== undefined ? `, p99 ${fmt(x.p99, 2)} ms` : ''}`,
      )
      .join('; ');
    lines.push(
      `- ${c.name}, every round (${each}); slowest / median ${fmt(c.slowestVsMedian ?? Number.NaN, 2)}×.`,
    );
  }
  return lines.join('\n');
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const argv = process.argv.slice(2);
  if (argv[0] === '--receiver') runReceiver();
  else if (argv[0] === '--queue-worker') {
    runQueueWorker(argv[1] as Kind, argv[2]!, argv[3]!, Number(argv[4])).catch((err) => {
      console.error(err);
      process.exit(1);
    });
  } else {
    const partial: Partial<QueueBenchOptions> = { log: (l) => console.error(l) };
    for (let i = 0; i < argv.length; i += 2) {
      const k = argv[i]!.replace(/^--/, '');
      const v = argv[i + 1]!;
      if (k === 'only') partial.only = v.split(',');
      else if (k === 'profile') partial.profileDir = v;
      else if (k === 'baseline') partial.baselineBin = v;
      else (partial as Record<string, unknown>)[k] = Number(v);
    }
    runQueueBench(partial)
      .then(async (r) => {
        console.log(formatQueueBench(r));
        if (partial.profileDir) {
          // Every hookd run's profile, oldest first: the last is the latency run of the last contender.
          const { summariesIn } = await import('./lib/profile.js');
          for (const summary of summariesIn(partial.profileDir)) console.log(`\n${summary}`);
        }
      })
      .catch((err) => {
        console.error(err);
        process.exit(1);
      });
  }
}
