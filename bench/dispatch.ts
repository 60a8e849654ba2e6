/**
 * Dispatch benchmark: callbacks per second delivered through the DeliveryPipeline, durable
 * (SQLite, `Persist: true`) and in memory (`Persist: false`), beside the raw ceiling of undici
 * `Pool.request` posting the same bodies to the same receiver (PERF-NOTES "Sending callbacks").
 * Then the latency from `accept` to the receiver at a fixed rate of about 1,000 callbacks/s.
 *
 * The receiver runs in a child process (a plain Node `http` server answering 200 at once), so it
 * does not share the event loop with the sender. Rounds are interleaved; results are medians.
 *
 * Run: `npx tsx bench/dispatch.ts` or, after `npm run build`, `node dist/bench/dispatch.js`.
 * Options: `--callbacks 20000 --rounds 5 --rate 1000 --seconds 5 --connections 64`.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { DeliveryPipeline } from '../src/delivery/pipeline.js';
import { samePlanForAll } from '../src/delivery/plan/index.js';
import type { FiredEvent } from '../src/engine/fired-event.js';
import { AddressPolicy } from '../src/policy/address-policy.js';
import { MemoryDeliveryStore } from '../src/store/memory/memory-delivery-store.js';
import { SqliteDeliveryStore } from '../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

export interface DispatchBenchOptions {
  /** Callbacks per throughput measurement. */
  callbacks: number;
  /** Interleaved rounds (at least 5 for a meaningful median). */
  rounds: number;
  /** Callbacks per second of the latency run. */
  rate: number;
  /** Length of the latency run, s. */
  seconds: number;
  /** Connections of the raw Pool and the pipeline's per-destination limit. */
  connections: number;
}

export interface Throughput {
  /** Median callbacks per second over the rounds. */
  perSecond: number;
  min: number;
  max: number;
  /** Median CPU time of this process per callback, µs (the receiver's is not counted). */
  cpuUsPerCallback: number;
  /**
   * Median time inside the durable store's writes per recorded callback, µs (the group commit's
   * own timing: its insert, outcome and attempt writes together); absent for the raw contender.
   */
  storeUsPerCallback?: number;
}

export interface Latency {
  p50: number;
  p99: number;
  max: number;
  count: number;
}

export interface DispatchBenchResult {
  options: DispatchBenchOptions;
  bodyBytes: number;
  raw: Throughput;
  durable: Throughput;
  memory: Throughput;
  latencyDurable: Latency;
  latencyMemory: Latency;
}

const HOOKS = 10;
const BURST = 250;
const BACKLOG = 2000;
const BODY = JSON.stringify({
  hook: 'hk_01KAB3Z5Q8Y7W6V5T4S3R2Q1P0',
  type: 'AfterCompletion',
  method: 'GET',
  path: '/repositories/r1/timeseries/ts1/data',
  uri: 'https://api.example.com/repositories/r1/timeseries/ts1/data?from=2026-01-01&to=2026-02-01',
  status: 200,
  captures: ['ts1'],
  timestamp: '2026-11-22T12:00:00.000+00:00',
  note: 'x'.repeat(40),
});

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Wall-clock ms with sub-ms precision, comparable between processes on one machine. */
const wallMs = (): number => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------------------------------------
// The receiver (child process)

function runReceiver(): void {
  let latencies: number[] = [];
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const t = req.headers['x-bench-t'];
    req.on('data', () => undefined);
    req.on('end', () => {
      if (typeof t === 'string') latencies.push(wallMs() - Number(t));
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
    });
  });
  server.listen(0, '127.0.0.1', () => {
    process.send!({ port: (server.address() as AddressInfo).port });
  });
  process.on('message', (m: { cmd: string }) => {
    if (m.cmd === 'latencies') {
      process.send!({ latencies });
      latencies = [];
    }
  });
  process.on('disconnect', () => process.exit(0));
}

interface ReceiverHandle {
  child: ChildProcess;
  url: string;
  latencies(): Promise<number[]>;
}

async function startReceiverProcess(): Promise<ReceiverHandle> {
  const file = fileURLToPath(import.meta.url);
  const child = fork(file, ['--receiver'], { execArgv: process.execArgv, stdio: 'inherit' });
  const port = await new Promise<number>((res, rej) => {
    child.once('message', (m: { port: number }) => res(m.port));
    child.once('exit', (code) => rej(new Error(`receiver exited with ${code}`)));
  });
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    latencies: () =>
      new Promise<number[]>((res) => {
        child.once('message', (m: { latencies: number[] }) => res(m.latencies));
        child.send({ cmd: 'latencies' });
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// The contenders

interface Measured {
  perSecond: number;
  cpuUs: number;
  storeUs?: number;
}

async function measure(n: number, run: () => Promise<void>): Promise<Measured> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { perSecond: (n / ms) * 1000, cpuUs: (cpu.user + cpu.system) / n };
}

/** undici Pool.request with `connections` requests in flight, reading each small answer. */
async function rawRound(url: string, n: number, connections: number): Promise<Measured> {
  const pool = new Pool(url, { connections });
  const headers = { 'content-type': 'application/json', 'user-agent': 'hookd-bench' };
  // Warm the connections so that both contenders start with open sockets.
  await Promise.all(
    Array.from({ length: connections }, async () => {
      const r = await pool.request({ path: '/warm', method: 'POST', headers, body: BODY });
      await r.body.dump();
    }),
  );
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      next++;
      const r = await pool.request({ path: '/hook', method: 'POST', headers, body: BODY });
      await r.body.text();
    }
  };
  const result = await measure(n, () =>
    Promise.all(Array.from({ length: connections }, worker)).then(() => undefined),
  );
  await pool.close();
  return result;
}

function events(url: string, n: number, persist: boolean, stamp: boolean): FiredEvent[] {
  const out: FiredEvent[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      hookId: `hk_bench${i % HOOKS}`,
      owner: 'bench',
      hookType: 1,
      persist,
      firedAt: '2026-11-22T12:00:00.000Z',
      trigger: { method: 'GET', path: '/repositories/r1/timeseries/ts1/data', statusCode: 200 },
      request: {
        method: 'POST',
        url: `${url}/hook`,
        headers: stamp
          ? { 'content-type': 'application/json', 'x-bench-t': '0' }
          : { 'content-type': 'application/json' },
        body: BODY,
      },
    });
  }
  return out;
}

interface PipelineRig {
  pipeline: DeliveryPipeline;
  /** Resolves once `n` attempts have ended (counted from the event bus, no polling). */
  attempts: (n: number) => Promise<void>;
  close: () => Promise<void>;
}

async function rig(connections: number, durable: boolean): Promise<PipelineRig> {
  const dir = mkdtempSync(join(tmpdir(), 'hookd-bench-'));
  // As the daemon opens it (open-store.ts): the WAL is checkpointed by a thread of its own.
  const sqlite = durable ? new SqliteStore(join(dir, 'hookd.db'), { checkpoint: 'thread' }) : undefined;
  const pipeline = new DeliveryPipeline({
    stores: {
      durable: sqlite ? new SqliteDeliveryStore(sqlite.db) : new MemoryDeliveryStore(),
      ephemeral: new MemoryDeliveryStore(),
    },
    send: { policy: new AddressPolicy(['127.0.0.0/8']) },
    plans: samePlanForAll(),
    limits: { concurrency: 256, perHost: connections, perEndpoint: connections },
    retention: { intervalMs: 0 },
  });
  let done = 0;
  let waiter: { n: number; resolve: () => void } | undefined;
  pipeline.events.on('attempt', () => {
    done++;
    if (waiter !== undefined && done >= waiter.n) {
      waiter.resolve();
      waiter = undefined;
    }
  });
  await pipeline.start();
  return {
    pipeline,
    attempts: (n) =>
      done >= n
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            waiter = { n, resolve };
          }),
    close: async () => {
      await pipeline.close(1000);
      await sqlite?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Accepts the events in bursts of 250 (as many requests firing in one turn would), keeping at
 * most `BACKLOG` callbacks outstanding, as a sender at its limit would: the pipeline works at full
 * speed with a steady backlog instead of queueing the whole run at once.
 */
async function pipelineRound(
  url: string,
  n: number,
  connections: number,
  durable: boolean,
): Promise<Measured> {
  const r = await rig(connections, durable);
  const warm = events(url, connections * 2, durable, false);
  r.pipeline.accept(warm);
  await r.attempts(warm.length);
  await r.pipeline.flush();
  const batch = events(url, n, durable, false);
  const base = warm.length;
  const store0 = { ...r.pipeline.stats().durableStore };
  const result = await measure(n, async () => {
    for (let i = 0; i < n; i += BURST) {
      if (i >= BACKLOG) await r.attempts(base + i - BACKLOG + BURST);
      r.pipeline.accept(batch.slice(i, i + BURST));
    }
    await r.attempts(base + n);
    await r.pipeline.flush();
  });
  const store = r.pipeline.stats().durableStore;
  await r.close();
  const callbacks = store.callbacks - store0.callbacks;
  if (callbacks > 0) result.storeUs = (store.ns - store0.ns) / 1000 / callbacks;
  return result;
}

/** Fires `rate` callbacks per second for `seconds`, in 10 ms ticks; the receiver times their arrival. */
async function latencyRun(
  receiver: ReceiverHandle,
  opts: DispatchBenchOptions,
  durable: boolean,
): Promise<Latency> {
  const r = await rig(opts.connections, durable);
  await receiver.latencies();
  const perTick = Math.max(1, Math.round(opts.rate / 100));
  const ticks = opts.seconds * 100;
  const all = events(receiver.url, perTick * ticks, durable, true);
  const start = performance.now();
  for (let tick = 0; tick < ticks; tick++) {
    const due = start + tick * 10;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((res) => setTimeout(res, wait));
    const slice = all.slice(tick * perTick, (tick + 1) * perTick);
    const t = String(wallMs());
    for (const e of slice) e.request.headers['x-bench-t'] = t;
    r.pipeline.accept(slice);
  }
  await r.attempts(all.length);
  await r.close();
  const lat = (await receiver.latencies()).sort((a, b) => a - b);
  return { p50: percentile(lat, 50), p99: percentile(lat, 99), max: lat[lat.length - 1]!, count: lat.length };
}

function summarise(rounds: Measured[]): Throughput {
  const rates = rounds.map((m) => m.perSecond);
  return {
    perSecond: median(rates),
    min: Math.min(...rates),
    max: Math.max(...rates),
    cpuUsPerCallback: median(rounds.map((m) => m.cpuUs)),
    ...(rounds.some((m) => m.storeUs !== undefined) && {
      storeUsPerCallback: median(rounds.map((m) => m.storeUs ?? 0)),
    }),
  };
}

/** Runs every measurement against one receiver process; see the file comment. */
export async function runDispatchBench(
  partial: Partial<DispatchBenchOptions> = {},
): Promise<DispatchBenchResult> {
  const options: DispatchBenchOptions = {
    callbacks: 20_000,
    rounds: 5,
    rate: 1000,
    seconds: 5,
    connections: 64,
    ...partial,
  };
  const receiver = await startReceiverProcess();
  try {
    const raw: Measured[] = [];
    const durable: Measured[] = [];
    const memory: Measured[] = [];
    for (let round = 0; round < options.rounds; round++) {
      // Rotate the order so that no contender always runs first (or last) in a round.
      const order = [0, 1, 2].map((i) => (i + round) % 3);
      for (const which of order) {
        if (which === 0) raw.push(await rawRound(receiver.url, options.callbacks, options.connections));
        else if (which === 1)
          durable.push(await pipelineRound(receiver.url, options.callbacks, options.connections, true));
        else memory.push(await pipelineRound(receiver.url, options.callbacks, options.connections, false));
      }
    }
    const latencyDurable = await latencyRun(receiver, options, true);
    const latencyMemory = await latencyRun(receiver, options, false);
    return {
      options,
      bodyBytes: Buffer.byteLength(BODY),
      raw: summarise(raw),
      durable: summarise(durable),
      memory: summarise(memory),
      latencyDurable,
      latencyMemory,
    };
  } finally {
    receiver.child.disconnect();
    receiver.child.kill();
  }
}

/** The results as a small table. */
export function formatDispatchBench(r: DispatchBenchResult): string {
  const k = (n: number) => `${(n / 1000).toFixed(1)}k/s`;
  const row = (name: string, t: Throughput) =>
    `${name.padEnd(40)} ${k(t.perSecond).padStart(9)}  (${k(t.min)}–${k(t.max)})  ${t.cpuUsPerCallback.toFixed(0).padStart(4)} µs CPU/callback  ${((t.perSecond / r.raw.perSecond) * 100).toFixed(0)}% of raw`;
  const lat = (name: string, l: Latency) =>
    `${name.padEnd(40)} p50 ${l.p50.toFixed(2)} ms  p99 ${l.p99.toFixed(2)} ms  max ${l.max.toFixed(1)} ms  (${l.count} callbacks)`;
  const o = r.options;
  return [
    `Throughput: ${o.callbacks} callbacks of ${r.bodyBytes} bytes per run, ${o.rounds} interleaved rounds, medians; ${o.connections} connections`,
    row('undici Pool.request (raw ceiling)', r.raw),
    row('pipeline, Persist: true (SQLite)', r.durable),
    row('pipeline, Persist: false (memory)', r.memory),
    `store µs per durable callback (SQLite, its own timing): ${r.durable.storeUsPerCallback?.toFixed(1) ?? 'n/a'}`,
    '',
    `Latency accept → receiver at ${o.rate}/s for ${o.seconds} s:`,
    lat('pipeline, Persist: true (SQLite)', r.latencyDurable),
    lat('pipeline, Persist: false (memory)', r.latencyMemory),
    `Node ${process.version}`,
  ].join('\n');
}

const parseArgs = (argv: string[]): Partial<DispatchBenchOptions> => {
  const opts: Partial<DispatchBenchOptions> = {};
  for (let i = 0; i < argv.length; i++) {
    const value = Number(argv[i + 1]);
    const key = (
      {
        '--callbacks': 'callbacks',
        '--rounds': 'rounds',
        '--rate': 'rate',
        '--seconds': 'seconds',
        '--connections': 'connections',
      } as const
    )[argv[i] as string];
    if (key && Number.isFinite(value)) {
      opts[key] = value;
      i++;
    }
  }
  return opts;
};

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--receiver')) {
    runReceiver();
  } else {
    const result = await runDispatchBench(parseArgs(process.argv.slice(2)));
    console.log(formatDispatchBench(result));
  }
}
