/**
 * The benchmark harness (`npm run bench`): runs every benchmark, prints the tables and writes
 * them, with the machine and the versions, into docs/BENCHMARKS.md (between the `bench:begin`
 * and `bench:end` markers; the prose around them is kept) and docs/benchmarks.json.
 *
 * Flags:
 *   --quick             smoke-sized run (seconds, not a measurement; used by the test suite)
 *   --only a,b          run only these of: match, proxy, dispatch, fire, size, cluster, queues, workers,
 *                       triggers, brokers, threads
 *   --out FILE          Markdown file to write (default docs/BENCHMARKS.md); --json FILE likewise
 *   --no-pin            do not pin processes to cores
 *   --no-setup          do not apt-get install missing wrk/nginx
 *   --tool wrk|autocannon   force a load generator
 *   --profile DIR       write a V8 CPU profile of the hookd with hooks (proxy bench) into DIR
 *   --baseline BIN      also run another build's bin/hookd.js in the proxy and queue benches (before/after)
 *   --quiet-wait SECS   wait up to SECS (default 600; 0: not at all) for the one-minute load average
 *                       to fall below 0.5 before the first section (a full run only)
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrokerBenchResult, formatBrokerBench, runBrokerBench } from './broker-callbacks.js';
import {
  type ClusterBenchResult,
  clusterBenchSkipReason,
  formatClusterBench,
  runClusterBench,
} from './cluster.js';
import { type FireLatencyResult, formatFireLatency, runFireLatencyBench } from './fire-latency.js';
import { REPO_ROOT } from './lib/peers.js';
import { canPin, LOAD_CORE, pinSelf } from './lib/process.js';
import { type QuietWait, waitForQuiet } from './lib/quiet.js';
import { fmt, table } from './lib/stats.js';
import { formatMatchBench, type MatchBenchResult, runMatchBench } from './match.js';
import { formatProxyBench, type ProxyBenchResult, runProxyBench } from './proxy.js';
import { type ContenderResult, formatQueueBench, type QueueBenchResult, runQueueBench } from './queues.js';
import { ensureTools, type Tools } from './setup.js';
import { formatSizeBench, runSizeBench, type SizeBenchResult } from './size.js';
import {
  formatThreadsBench,
  runThreadsBench,
  type ThreadsBenchResult,
  type ThreadsStore,
} from './threads.js';
import { formatTriggerCost, runTriggerCostBench, type TriggerCostResult } from './trigger-cost.js';
import { formatWorkersBench, runWorkersBench, type WorkersBenchResult } from './workers.js';

export const SECTIONS = [
  'match',
  'proxy',
  'dispatch',
  'fire',
  'size',
  'cluster',
  'queues',
  'workers',
  'triggers',
  'brokers',
  'threads',
] as const;
export type Section = (typeof SECTIONS)[number];

export const TITLES: Record<Section, string> = {
  match: '1. Match',
  proxy: '2. Proxy',
  dispatch: '3. Dispatch',
  fire: '4. Fire latency',
  size: '5. Size',
  cluster: '6. Cluster (PostgreSQL)',
  queues: '7. Queue peers (BullMQ, pg-boss, graphile-worker)',
  workers: '8. Workers (--workers 2 vs one process)',
  triggers: '9. Trigger cost (CPU per callback at 1,000/s)',
  brokers: "10. Broker callbacks (against each broker's own client)",
  threads: '11. Delivery threads (2 threads under 2Q against the core loop under Q)',
};

export interface BenchOptions {
  quick: boolean;
  only: Section[];
  out: string;
  json: string;
  pin: boolean;
  setup: boolean;
  tool?: 'wrk' | 'autocannon';
  profileDir?: string;
  /** Another build's bin/hookd.js to compare in the proxy bench (before/after). */
  baselineBin?: string;
  /** How long a full run waits for a quiet machine before its first section (seconds). */
  quietWaitSeconds: number;
  log: (line: string) => void;
}

export interface TargetRow {
  section: Section;
  target: string;
  measured: string;
  /** undefined: not judged (not measured at the target's size, or skipped). */
  met?: boolean;
}

export interface SectionOutcome {
  section: Section;
  status: 'ok' | 'skipped' | 'failed';
  /** Markdown: the table and its notes, or the skip/failure line. */
  text: string;
  result?: unknown;
  seconds: number;
  /** When the section was measured, if not in this run (kept from an earlier report). */
  measured?: string;
}

export interface BenchReport {
  date: string;
  quick: boolean;
  machine: Record<string, unknown>;
  sections: SectionOutcome[];
  targets: TargetRow[];
}

const PARAMS = {
  full: {
    match: { sizes: [1_000, 10_000, 100_000, 1_000_000], lookups: 1_000_000, rounds: 5 },
    proxy: {
      rounds: 5,
      durationS: 5,
      connections: 50,
      rate: 1000,
      rateConnections: 20,
      rateDurationS: 5,
      hooks: 10_000,
      warmupS: 3,
    },
    fire: { rounds: 5, durationS: 5, rate: 1000, connections: 50, warmupS: 3 },
    /** The same at 10,000 triggers/s (100 connections, each paced to ~100/s). */
    fireHigh: { rounds: 5, durationS: 5, rate: 10_000, connections: 100, warmupS: 3 } as
      | { rounds: number; durationS: number; rate: number; connections: number; warmupS: number }
      | undefined,
    dispatch: { rounds: 5 },
    size: { hooks: 100_000, rounds: 5, settleMs: 1000, warmStart: true },
    /** The 1,000,000-hook row fewer rounds, seeding alone takes a while. */
    sizeMillion: { hooks: 1_000_000, rounds: 3, settleMs: 2000, warmStart: true } as
      | { hooks: number; rounds: number; settleMs: number; warmStart: boolean }
      | undefined,
    cluster: { rounds: 3 },
    queues: { callbacks: 20_000, warmup: 2_000, rounds: 5, rate: 1000, seconds: 5 },
    workers: { rounds: 5, durationS: 5, warmupS: 2, connections: 50, cpuQuota: 0.25 },
    triggers: { rate: 1000, seconds: 5, rounds: 5 },
    brokers: { messages: 5000, brokers: ['amqp', 'mqtt', 'nats', 'redis'], rounds: 3 },
    threads: {
      callbacks: 20_000,
      warmup: 3_000,
      rounds: 3,
      cpuQuota: 0.4,
      stores: ['sqlite', 'postgres'] as ThreadsStore[],
    },
  },
  quick: {
    match: { sizes: [1_000], lookups: 20_000, rounds: 1 },
    proxy: {
      rounds: 1,
      durationS: 1,
      connections: 10,
      rate: 200,
      rateConnections: 4,
      rateDurationS: 0,
      hooks: 500,
      warmupS: 0,
    },
    fire: { rounds: 1, durationS: 1, rate: 100, connections: 4, warmupS: 0 },
    fireHigh: undefined,
    dispatch: { callbacks: 300, rounds: 1, rate: 100, seconds: 1, connections: 8 },
    size: { hooks: 1_000, rounds: 1, settleMs: 100, warmStart: false },
    sizeMillion: undefined,
    cluster: { callbacks: 1000, warmup: 200, rounds: 1, instances: [1, 2] },
    queues: { callbacks: 300, warmup: 100, rounds: 1, rate: 100, seconds: 1 },
    workers: { rounds: 1, durationS: 1, warmupS: 0, connections: 10, cpuQuota: 0 },
    triggers: { rate: 100, seconds: 1, rounds: 1 },
    brokers: { messages: 200, brokers: ['amqp', 'mqtt', 'nats', 'redis'], rounds: 1 },
    threads: { callbacks: 500, warmup: 100, rounds: 1, cpuQuota: 0, stores: ['sqlite'] as ThreadsStore[] },
  },
};

const packageVersion = (name: string): string | undefined => {
  try {
    const p = join(REPO_ROOT, 'node_modules', name, 'package.json');
    return (JSON.parse(readFileSync(p, 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
};

function machine(tools: Tools, pinned: boolean, wait: QuietWait | undefined): Record<string, unknown> {
  const c = cpus();
  return {
    cpu: c[0]?.model ?? 'unknown',
    cores: c.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${type()} ${release()}`,
    node: process.version,
    hookd: (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    undici: packageVersion('undici'),
    betterSqlite3: packageVersion('better-sqlite3'),
    autocannon: packageVersion('autocannon'),
    wrk: tools.wrk ?? 'not installed',
    nginx: tools.nginx ?? 'not installed',
    pinned,
    loadAverageAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
    ...(wait && { loadAverageBeforeWait: wait.before, waitedForQuietSeconds: wait.waitedSeconds }),
    setup: tools.messages,
  };
}

const ns = (n: number) => (n >= 10_000 ? `${fmt(n / 1000, 1)} µs` : `${fmt(n, 0)} ns`);

/** The targets against what was measured; a target is judged only at its own size. */
export function judgeTargets(outcomes: SectionOutcome[]): TargetRow[] {
  const rows: TargetRow[] = [];
  const of = <T>(s: Section) =>
    outcomes.find((o) => o.section === s && o.status === 'ok')?.result as T | undefined;

  const match = of<MatchBenchResult[]>('match');
  const m100k = match?.find((r) => r.hooks === 100_000);
  rows.push({
    section: 'match',
    target: 'lookup ≤ 2 µs at 100k hooks',
    measured: m100k ? ns(m100k.index.nsPerLookup.median) : 'not measured at 100k',
    ...(m100k && { met: m100k.index.nsPerLookup.median <= 2000 }),
  });
  rows.push({
    section: 'match',
    target: '≥ 100× the RegExp loop at 100k hooks',
    measured: m100k ? `${fmt(m100k.speedup, 0)}×` : 'not measured at 100k',
    ...(m100k && { met: m100k.speedup >= 100 }),
  });

  const proxy = of<ProxyBenchResult>('proxy');
  const at10k = proxy?.options.hooks === 10_000;
  rows.push({
    section: 'proxy',
    target: 'hookd with 10,000 hooks ≥ 0.7× nginx requests/s',
    measured: proxy?.hookdVsNginx
      ? `${fmt(proxy.hookdVsNginx.median, 2)}× (rounds ${fmt(proxy.hookdVsNginx.min, 2)}–${fmt(proxy.hookdVsNginx.max, 2)})` +
        (proxy.nodeVsNginx ? `; a bare Node proxy: ${fmt(proxy.nodeVsNginx.median, 2)}×` : '')
      : proxy
        ? 'nginx not available'
        : 'not measured',
    ...(proxy?.hookdVsNginx && at10k && { met: proxy.hookdVsNginx.median >= 0.7 }),
  });
  rows.push({
    section: 'proxy',
    target: `p99 added by hookd (10,000 hooks) ≤ 1 ms at a moderate fixed rate`,
    measured: proxy?.addedP99Ms
      ? `${fmt(proxy.addedP99Ms.median, 2)} ms at ~${proxy.options.rate}/s (rounds ${fmt(proxy.addedP99Ms.min, 2)}–${fmt(proxy.addedP99Ms.max, 2)})` +
        (proxy.addedP99MsNginx ? `; nginx: ${fmt(proxy.addedP99MsNginx.median, 2)} ms` : '')
      : 'not measured',
    ...(proxy?.addedP99Ms && at10k && { met: proxy.addedP99Ms.median <= 1 }),
  });

  // bench/dispatch.ts is another module: its result is read defensively.
  type Through = { perSecond?: number; cpuUsPerCallback?: number };
  const dispatch = outcomes.find((o) => o.section === 'dispatch' && o.status === 'ok')?.result as
    | { raw?: Through; durable?: Through; options?: { rounds?: number } }
    | undefined;
  const raw = dispatch?.raw?.perSecond;
  const durable = dispatch?.durable?.perSecond;
  const judged = typeof raw === 'number' && typeof durable === 'number' && raw > 0;
  const rawCpu = dispatch?.raw?.cpuUsPerCallback;
  const durableCpu = dispatch?.durable?.cpuUsPerCallback;
  const cpuJudged = typeof rawCpu === 'number' && typeof durableCpu === 'number' && rawCpu > 0;
  rows.push({
    section: 'dispatch',
    target: "durable callback CPU ≤ 2× raw undici's",
    measured: cpuJudged
      ? `${fmt(durableCpu / rawCpu, 2)}× (${fmt(durableCpu, 0)} µs vs ${fmt(rawCpu, 0)} µs)`
      : 'not measured',
    ...(cpuJudged && (dispatch?.options?.rounds ?? 0) >= 5 && { met: durableCpu / rawCpu <= 2 }),
  });
  rows.push({
    section: 'dispatch',
    target: 'SQLite ≥ 0.5× raw undici on one core',
    measured: judged
      ? `${fmt(durable / raw, 2)}× (${fmt(durable, 0)}/s vs ${fmt(raw, 0)}/s)`
      : dispatch
        ? 'see section 3'
        : 'not measured',
    ...(judged && (dispatch?.options?.rounds ?? 0) >= 5 && { met: durable / raw >= 0.5 }),
  });

  const fire = of<FireLatencyResult>('fire');
  for (const c of fire?.contenders ?? [{ label: 'Persist: true' } as never]) {
    const measured = fire
      ? `${fmt(c.summary.p99Ms.median, 2)} ms at ${fmt(c.summary.rate.median, 0)}/s (rounds ${fmt(c.summary.p99Ms.min, 2)}–${fmt(c.summary.p99Ms.max, 2)})`
      : 'not measured';
    rows.push({
      section: 'fire',
      target: `fire latency p99 ≤ 10 ms at 1,000 callbacks/s (${c.label})`,
      measured,
      ...(fire && fire.options.rate === 1000 && { met: c.summary.p99Ms.median <= 10 }),
    });
    rows.push({
      section: 'fire',
      target: `fire latency p99 ≤ 2 ms at 1,000 callbacks/s (${c.label})`,
      measured,
      ...(fire && fire.options.rate === 1000 && { met: c.summary.p99Ms.median <= 2 }),
    });
  }

  const high = (fire as (FireLatencyResult & { high?: FireLatencyResult }) | undefined)?.high;
  const highDurable = high?.contenders.find((c) => c.label === 'Persist: true');
  rows.push({
    section: 'fire',
    target: 'fire latency p99 ≤ 10 ms at 10,000 triggers/s (Persist: true)',
    measured: highDurable
      ? `${fmt(highDurable.summary.p99Ms.median, 2)} ms at ${fmt(highDurable.summary.rate.median, 0)}/s (rounds ${fmt(highDurable.summary.p99Ms.min, 2)}–${fmt(highDurable.summary.p99Ms.max, 2)})`
      : 'not measured at 10,000/s',
    // Judged only if the generator really reached the rate (within 10 %).
    ...(highDurable &&
      highDurable.summary.rate.median >= 9000 && { met: highDurable.summary.p99Ms.median <= 10 }),
  });

  const size = of<SizeBenchResult>('size');
  const full = size?.contenders.find((c) => c.hooks === 100_000);
  rows.push({
    section: 'size',
    target: 'RSS with 100,000 hooks ≤ 300 MB',
    measured: full ? `${fmt(full.summary.rssBytes.median / 1048576, 0)} MB` : 'not measured at 100k',
    ...(full && { met: full.summary.rssBytes.median <= 300 * 1048576 }),
  });
  rows.push({
    section: 'size',
    target: 'start-up with 100,000 persisted hooks ≤ 2 s',
    measured: full ? `${fmt(full.summary.startMs.median, 0)} ms` : 'not measured at 100k',
    ...(full && { met: full.summary.startMs.median <= 2000 }),
  });

  const m1m = match?.find((r) => r.hooks === 1_000_000);
  rows.push({
    section: 'match',
    target: 'lookup ≤ 1.5 µs at 1,000,000 hooks',
    measured: m1m ? ns(m1m.index.nsPerLookup.median) : 'not measured at 1M',
    ...(m1m && { met: m1m.index.nsPerLookup.median <= 1500 }),
  });
  rows.push({
    section: 'size',
    target: 'RSS with 100,000 hooks ≤ 200 MB; start-up ≤ 1 s',
    measured: full
      ? `${fmt(full.summary.rssBytes.median / 1048576, 0)} MB; ${fmt(full.summary.startMs.median, 0)} ms`
      : 'not measured at 100k',
    ...(full && {
      met: full.summary.rssBytes.median <= 200 * 1048576 && full.summary.startMs.median <= 1000,
    }),
  });
  rows.push({
    section: 'size',
    target: 'start-up with 100,000 hooks ≤ 1 s',
    measured: full ? `${fmt(full.summary.startMs.median, 0)} ms` : 'not measured at 100k',
    ...(full && { met: full.summary.startMs.median <= 1000 }),
  });
  const million = size?.contenders.find((c) => c.hooks === 1_000_000);
  rows.push({
    section: 'size',
    target: 'RSS with 1,000,000 hooks ≤ 1 GB (start-up measured)',
    measured: million
      ? `${fmt(million.summary.rssBytes.median / 1048576, 0)} MB; start-up ${fmt(million.summary.startMs.median, 0)} ms`
      : 'not measured at 1M',
    ...(million && { met: million.summary.rssBytes.median <= 1024 * 1048576 }),
  });
  const cluster = of<ClusterBenchResult>('cluster');
  const c1 = cluster?.rows.find((x) => x.instances === 1);
  const c3 = cluster?.rows.find((x) => x.instances === 3);
  rows.push({
    section: 'cluster',
    target: '3 instances ≥ 2.5× one, each under an equal CPU quota',
    measured:
      c1 && c3
        ? `${fmt(c3.perSecond / c1.perSecond, 2)}× (${fmt(c3.perSecond, 0)} vs ${fmt(c1.perSecond, 0)}/s)` +
          (cluster?.options.cpuQuota ? `, ${cluster.options.cpuQuota} CPU each` : ', no quota')
        : 'not measured with 1 and 3 instances',
    ...(c1 && c3 && cluster?.options.cpuQuota && { met: c3.perSecond / c1.perSecond >= 2.5 }),
  });

  const queues = of<QueueBenchResult>('queues');
  const q = (name: string): ContenderResult | undefined =>
    queues?.contenders.find((c) => c.name.startsWith(name) && !c.skipped);
  const judgedQ = (queues?.options.rounds ?? 0) >= 5;
  const sqlite = q('hookd, SQLite');
  const onPg = q('hookd on PostgreSQL');
  const rawQ = q('raw');
  for (const peer of ['BullMQ', 'pg-boss']) {
    const other = q(peer);
    const ok = sqlite && other;
    rows.push({
      section: 'queues',
      target: `hookd SQLite ≥ 2× ${peer}'s callbacks/s at ≤ 0.4× its CPU per callback`,
      measured: ok
        ? `${fmt(sqlite.perSecond / other.perSecond, 2)}× at ${fmt(sqlite.cpuUsPerCallback / other.cpuUsPerCallback, 2)}× CPU`
        : 'not measured',
      ...(ok &&
        judgedQ && {
          met:
            sqlite.perSecond / other.perSecond >= 2 &&
            sqlite.cpuUsPerCallback / other.cpuUsPerCallback <= 0.4,
        }),
    });
    const okPg = onPg && other;
    rows.push({
      section: 'queues',
      target: `hookd on PostgreSQL ≥ 1.3× ${peer}'s callbacks/s at no more CPU per callback`,
      measured: okPg
        ? `${fmt(onPg.perSecond / other.perSecond, 2)}× at ${fmt(onPg.cpuUsPerCallback / other.cpuUsPerCallback, 2)}× CPU`
        : 'not measured',
      ...(okPg &&
        judgedQ && {
          met: onPg.perSecond / other.perSecond >= 1.3 && onPg.cpuUsPerCallback <= other.cpuUsPerCallback,
        }),
    });
  }
  rows.push({
    section: 'queues',
    target: 'hookd SQLite ≥ 0.7× the raw undici ceiling',
    measured: sqlite && rawQ ? `${fmt(sqlite.perSecond / rawQ.perSecond, 2)}×` : 'not measured',
    ...(sqlite && rawQ && judgedQ && { met: sqlite.perSecond / rawQ.perSecond >= 0.7 }),
  });
  const pgRounds = onPg?.rounds ?? [];
  const worstP99 = Math.max(...pgRounds.map((x) => x.p99 ?? Number.NaN));
  rows.push({
    section: 'queues',
    target:
      'hookd on PostgreSQL: slowest round ≥ 0.8× the median callbacks/s; paced p99 ≤ 10 ms in every round',
    measured:
      onPg?.slowestVsMedian !== undefined
        ? `${fmt(onPg.slowestVsMedian, 2)}×; worst round's p99 ${fmt(worstP99, 2)} ms (${pgRounds.length} rounds)`
        : 'not measured',
    ...(onPg?.slowestVsMedian !== undefined &&
      judgedQ && { met: onPg.slowestVsMedian >= 0.8 && worstP99 <= 10 }),
  });
  rows.push({
    section: 'queues',
    target: 'hookd on PostgreSQL p99 ≤ 10 ms at 1,000 callbacks/s',
    measured: onPg ? `${fmt(onPg.p99, 2)} ms` : 'not measured',
    ...(onPg && judgedQ && queues?.options.rate === 1000 && { met: onPg.p99 <= 10 }),
  });
  const workers = of<WorkersBenchResult>('workers');
  rows.push({
    section: 'workers',
    target: 'proxied requests/s, 2 workers ≥ 1.8× one, each under an equal CPU quota',
    measured: workers
      ? `${fmt(workers.ratio.median, 2)}× (rounds ${fmt(workers.ratio.min, 2)}–${fmt(workers.ratio.max, 2)}; ` +
        `${fmt(workers.two.median, 0)} vs ${fmt(workers.one.median, 0)}/s)` +
        (workers.options.cpuQuota ? `, ${workers.options.cpuQuota} CPU each` : ', no quota')
      : 'not measured',
    ...(workers &&
      workers.options.cpuQuota > 0 &&
      workers.options.rounds >= 3 && { met: workers.ratio.median >= 1.8 }),
  });
  const triggers = of<TriggerCostResult>('triggers');
  const tJudged = triggers !== undefined && triggers.options.rate === 1000 && triggers.options.rounds >= 5;
  rows.push({
    section: 'triggers',
    target: 'trigger + callback ≤ 1.5× a raw callback at 1,000/s (report)',
    measured: triggers?.reportVsRaw
      ? `${fmt(triggers.reportVsRaw.median, 2)}× (rounds ${fmt(triggers.reportVsRaw.min, 2)}–${fmt(triggers.reportVsRaw.max, 2)})`
      : 'not measured',
    ...(tJudged && triggers.reportVsRaw && { met: triggers.reportVsRaw.median <= 1.5 }),
  });
  rows.push({
    section: 'triggers',
    target: 'proxied request firing a callback ≤ a plain proxied one + 1.5× a raw callback at 1,000/s',
    measured: triggers?.proxiedCallbackVsRaw
      ? `${fmt(triggers.proxiedCallbackVsRaw.median, 2)}× a raw callback added (rounds ${fmt(triggers.proxiedCallbackVsRaw.min, 2)}–${fmt(triggers.proxiedCallbackVsRaw.max, 2)})`
      : 'not measured',
    ...(tJudged && triggers.proxiedCallbackVsRaw && { met: triggers.proxiedCallbackVsRaw.median <= 1.5 }),
  });
  const brokers = of<BrokerBenchResult>('brokers');
  for (const name of ['amqp', 'mqtt', 'nats', 'redis']) {
    const b = brokers?.rows.find((x) => x.broker === name);
    rows.push({
      section: 'brokers',
      target: `${name.toUpperCase()} callback CPU ≤ 1.2× an HTTP callback's, and callbacks/s ≥ 0.5× the broker's own client`,
      measured: b
        ? `${fmt(b.cpuVsHttp, 2)}× CPU (${fmt(b.cpuUs, 0)} µs); ${fmt(b.ratio, 2)}× (${fmt(b.hookd, 0)} vs ${fmt(b.direct, 0)}/s)`
        : 'not measured',
      ...(b && (brokers?.rounds ?? 0) >= 3 && { met: b.cpuVsHttp <= 1.2 && b.ratio >= 0.5 }),
    });
  }
  const threads = of<ThreadsBenchResult>('threads');
  for (const [store, name] of [
    ['sqlite', 'SQLite'],
    ['postgres', 'PostgreSQL'],
  ] as const) {
    const t = threads?.ratios.find((x) => x.store === store);
    const rows2 = threads?.rows.filter((x) => x.store === store) ?? [];
    rows.push({
      section: 'threads',
      target: `callbacks/s with delivery on 2 threads ≥ 1.7× one thread (${name}), under CPU quotas 2Q and Q`,
      measured: t
        ? `${fmt(t.median, 2)}× (rounds ${fmt(t.min, 2)}–${fmt(t.max, 2)}; ` +
          rows2.map((x) => `${fmt(x.perSecond, 0)}/s at ${fmt(x.cpuUs, 0)} µs`).join(' vs ') +
          `)${threads?.options.cpuQuota ? `, Q = ${threads.options.cpuQuota} CPU` : ', no quota'}`
        : 'not measured',
      ...(t &&
        threads &&
        threads.options.cpuQuota > 0 &&
        threads.options.rounds >= 3 && { met: t.median >= 1.7 }),
    });
  }
  return rows;
}

interface DispatchModule {
  runDispatchBench: (opts: Record<string, unknown>) => Promise<unknown>;
  formatDispatchBench?: (result: unknown) => string;
}

async function runSection(s: Section, opts: BenchOptions): Promise<SectionOutcome> {
  const p = opts.quick ? PARAMS.quick : PARAMS.full;
  const t0 = Date.now();
  const done = (o: Omit<SectionOutcome, 'seconds' | 'section'>): SectionOutcome => ({
    section: s,
    ...o,
    seconds: Math.round((Date.now() - t0) / 100) / 10,
  });
  const common = { pin: opts.pin, log: opts.log, ...(opts.tool && { tool: opts.tool }) };
  try {
    switch (s) {
      case 'match': {
        const r = await runMatchBench(p.match);
        return done({ status: 'ok', result: r, text: `\`\`\`\n${formatMatchBench(r)}\n\`\`\`` });
      }
      case 'proxy': {
        const r = await runProxyBench({
          ...p.proxy,
          ...common,
          ...(opts.profileDir && { cpuProfDir: opts.profileDir }),
          ...(opts.baselineBin && { baselineBin: opts.baselineBin }),
        });
        return done({ status: 'ok', result: r, text: formatProxyBench(r) });
      }
      case 'fire': {
        const r = await runFireLatencyBench({ ...p.fire, ...common });
        if (!p.fireHigh) return done({ status: 'ok', result: r, text: formatFireLatency(r) });
        // The 10,000/s run rides along in the same section, as `high`.
        const high = await runFireLatencyBench({ ...p.fireHigh, ...common });
        return done({
          status: 'ok',
          result: { ...r, high },
          text: `${formatFireLatency(r)}\n\nAt 10,000 triggers/s:\n\n${formatFireLatency(high)}`,
        });
      }
      case 'size': {
        const r = await runSizeBench({ ...p.size, pin: opts.pin, log: opts.log });
        if (!p.sizeMillion) return done({ status: 'ok', result: r, text: formatSizeBench(r) });
        const m = await runSizeBench({ ...p.sizeMillion, pin: opts.pin, log: opts.log });
        // One result: the 1M row joins the 100k one (the empty baseline is measured in both).
        const joined: SizeBenchResult = {
          ...r,
          contenders: [...r.contenders, ...m.contenders.filter((c) => c.hooks > 0)],
        };
        return done({
          status: 'ok',
          result: joined,
          text: `${formatSizeBench(r)}\n\n${formatSizeBench(m)}`,
        });
      }
      case 'cluster': {
        const why = await clusterBenchSkipReason();
        if (why) return done({ status: 'skipped', text: `Skipped: ${why}.` });
        // Its instances, PostgreSQL and receiver inherit this process's affinity: give them every core.
        if (opts.pin) pinSelf(undefined);
        try {
          const r = await runClusterBench({ ...p.cluster, log: opts.log });
          return done({ status: 'ok', result: r, text: `\`\`\`\n${formatClusterBench(r)}\n\`\`\`` });
        } finally {
          if (opts.pin) pinSelf(LOAD_CORE);
        }
      }
      case 'queues': {
        // Producer, workers, hookd and the servers share the machine: every core for them.
        if (opts.pin) pinSelf(undefined);
        try {
          const r = await runQueueBench({
            ...p.queues,
            log: opts.log,
            ...(opts.baselineBin && { baselineBin: opts.baselineBin }),
          });
          return done({ status: 'ok', result: r, text: formatQueueBench(r) });
        } finally {
          if (opts.pin) pinSelf(LOAD_CORE);
        }
      }
      case 'workers': {
        // Two workers, a primary, the upstream and the generator: every core for them.
        if (opts.pin) pinSelf(undefined);
        try {
          const r = await runWorkersBench({
            ...p.workers,
            log: opts.log,
            ...(opts.tool && { tool: opts.tool }),
          });
          return done({ status: 'ok', result: r, text: formatWorkersBench(r) });
        } finally {
          if (opts.pin) pinSelf(LOAD_CORE);
        }
      }
      case 'triggers': {
        const r = await runTriggerCostBench({
          ...p.triggers,
          log: opts.log,
          ...(opts.baselineBin && { baselineBin: opts.baselineBin }),
        });
        return done({ status: 'ok', result: r, text: formatTriggerCost(r) });
      }
      case 'threads': {
        // PostgreSQL is measured where it answers; SQLite always.
        const pgSkip = await clusterBenchSkipReason();
        const stores = (p.threads.stores ?? ['sqlite', 'postgres']).filter(
          (x) => x !== 'postgres' || !pgSkip,
        );
        // hookd, its receiver and the load share the machine: every core for them.
        if (opts.pin) pinSelf(undefined);
        try {
          const r = await runThreadsBench({ ...p.threads, stores, log: opts.log });
          const note = pgSkip && stores.length < 2 ? `\n\nPostgreSQL not measured: ${pgSkip}.` : '';
          return done({ status: 'ok', result: r, text: `${formatThreadsBench(r)}${note}` });
        } finally {
          if (opts.pin) pinSelf(LOAD_CORE);
        }
      }
      case 'brokers': {
        // hookd, the brokers and the consumers share the machine: every core for them.
        if (opts.pin) pinSelf(undefined);
        try {
          const r = await runBrokerBench({ ...p.brokers, log: opts.log });
          return done({ status: 'ok', result: r, text: formatBrokerBench(r) });
        } finally {
          if (opts.pin) pinSelf(LOAD_CORE);
        }
      }
      case 'dispatch': {
        let mod: DispatchModule;
        try {
          // Written separately (the delivery pipeline's own benchmark); absent until it lands.
          mod = (await import(new URL('./dispatch.js', import.meta.url).href)) as DispatchModule;
        } catch (err) {
          return done({
            status: 'skipped',
            text: `Skipped: bench/dispatch.ts is not available yet (${(err as Error).message.split('\n')[0]}).`,
          });
        }
        // Its sender and forked receiver inherit this process's affinity: let them use every core.
        if (opts.pin) pinSelf(undefined);
        try {
          const r = await mod.runDispatchBench(p.dispatch);
          const text = mod.formatDispatchBench
            ? mod.formatDispatchBench(r)
            : `\`\`\`json\n${JSON.stringify(r, null, 2)}\n\`\`\``;
          return done({
            status: 'ok',
            result: r,
            text: text.startsWith('|') ? text : `\`\`\`\n${text}\n\`\`\``,
          });
        } finally {
          if (opts.pin) pinSelf(LOAD_CORE);
        }
      }
    }
  } catch (err) {
    return done({ status: 'failed', text: `**Failed:** ${(err as Error).stack ?? String(err)}` });
  }
}

const BEGIN = '<!-- bench:begin -->';
const END = '<!-- bench:end -->';

function renderGenerated(r: BenchReport): string {
  const m = r.machine;
  const lines = [
    BEGIN,
    `## Latest run: ${r.date}${r.quick ? ' (quick smoke run: not a measurement)' : ''}`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}; load average at start ${(m.loadAverageAtStart as number[]).join(' ')}` +
      (typeof m.waitedForQuietSeconds === 'number' && m.waitedForQuietSeconds > 0
        ? ` (after ${m.waitedForQuietSeconds} s waiting for it to fall below 0.5 from ${(m.loadAverageBeforeWait as number[]).join(' ')})`
        : '') +
      `${m.pinned ? '; servers pinned to core 0, load generators to core 1' : '; not pinned'}.`,
    `Versions: hookd ${m.hookd}, Node ${m.node}, undici ${m.undici}, better-sqlite3 ${m.betterSqlite3}, ` +
      `autocannon ${m.autocannon}, wrk ${m.wrk}, nginx ${m.nginx}.`,
    ...(m.setup as string[]).map((x) => `Setup: ${x}.`),
    '',
    '### Targets',
    '',
    table(
      ['', 'target', 'measured (median)', 'met'],
      r.targets.map((t) => [
        TITLES[t.section],
        t.target,
        t.measured,
        t.met === undefined ? '—' : t.met ? 'yes' : '**no**',
      ]),
    ),
    '',
  ];
  for (const s of r.sections) {
    const when = s.measured ? `; kept from the run of ${s.measured}` : '';
    lines.push(`### ${TITLES[s.section]} (${s.seconds} s${when})`, '', s.text, '');
  }
  lines.push(END);
  return lines.join('\n');
}

const SKELETON = `# Benchmarks

Reproduce with \`npm run bench\` (builds, then \`node dist/bench/run.js\`); \`--quick\` for a smoke
run, \`--only match,proxy,dispatch,fire,size\` for some of them. The section between the markers
below is rewritten by every run; the rest of this file is kept.

`;

/** Writes the report into the Markdown file, keeping what is outside the markers. */
export function writeMarkdown(file: string, report: BenchReport): void {
  const generated = renderGenerated(report);
  let doc: string;
  try {
    doc = readFileSync(file, 'utf8');
  } catch {
    doc = SKELETON;
  }
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  doc =
    a !== -1 && b > a
      ? doc.slice(0, a) + generated + doc.slice(b + END.length)
      : `${doc.replace(/\s*$/, '\n\n')}${generated}\n`;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, doc);
}

/** The report an earlier run wrote to `file`, if it was of the same kind (quick or full). */
function previousReport(file: string, quick: boolean): BenchReport | undefined {
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as BenchReport;
    return r.quick === quick && Array.isArray(r.sections) ? r : undefined;
  } catch {
    return undefined;
  }
}

/** Runs the selected benchmarks and writes the Markdown and JSON reports. */
export async function runBench(opts: BenchOptions): Promise<BenchReport> {
  const tools = ensureTools({ install: opts.setup, log: opts.log });
  for (const m of tools.messages) opts.log(`setup: ${m}`);
  const pinned = opts.pin && canPin();
  // This process hosts autocannon and the fire-latency receiver: it belongs on the load core.
  if (pinned) pinSelf(LOAD_CORE);
  // The setup itself (apt-get) loads the machine: the load at start is read after it settles.
  const wait =
    opts.quick || opts.quietWaitSeconds <= 0
      ? undefined
      : await waitForQuiet(0.5, opts.quietWaitSeconds, opts.log);
  if (wait && !wait.quiet) opts.log(`the machine did not become quiet: load average ${wait.after.join(' ')}`);
  const report: BenchReport = {
    date: new Date().toISOString(),
    quick: opts.quick,
    machine: machine(tools, pinned, wait),
    sections: [],
    targets: [],
  };
  const previous = previousReport(opts.json, opts.quick);
  for (const s of SECTIONS) {
    if (!opts.only.includes(s)) {
      // `--only` refreshes some sections: the others keep their last figures, dated.
      const kept = previous?.sections.find((o) => o.section === s && o.status === 'ok');
      report.sections.push(
        kept && previous
          ? { ...kept, measured: kept.measured ?? previous.date }
          : { section: s, status: 'skipped', text: 'Skipped: not selected (--only).', seconds: 0 },
      );
      continue;
    }
    opts.log(`== ${TITLES[s]}`);
    const outcome = await runSection(s, { ...opts, pin: pinned });
    opts.log(outcome.text);
    report.sections.push(outcome);
  }
  report.machine.loadAverageAtEnd = loadavg().map((x) => Math.round(x * 100) / 100);
  report.targets = judgeTargets(report.sections);
  writeMarkdown(opts.out, report);
  mkdirSync(dirname(opts.json), { recursive: true });
  writeFileSync(opts.json, `${JSON.stringify(report, null, 2)}\n`);
  return report;
}

/** Parses the command line (see the module comment). */
export function parseBenchArgs(argv: string[], log: (line: string) => void = console.log): BenchOptions {
  const opts: BenchOptions = {
    quick: false,
    only: [...SECTIONS],
    out: join(REPO_ROOT, 'docs', 'BENCHMARKS.md'),
    json: '',
    pin: true,
    setup: true,
    quietWaitSeconds: 600,
    log,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--quick') opts.quick = true;
    else if (a === '--no-pin') opts.pin = false;
    else if (a === '--no-setup') opts.setup = false;
    else if (a === '--out') opts.out = resolve(next());
    else if (a === '--json') opts.json = resolve(next());
    else if (a === '--profile') opts.profileDir = resolve(next());
    else if (a === '--baseline') opts.baselineBin = resolve(next());
    else if (a === '--quiet-wait') {
      const v = Number(next());
      if (!Number.isFinite(v) || v < 0) throw new Error('--quiet-wait is a number of seconds, 0 or more');
      opts.quietWaitSeconds = v;
    } else if (a === '--tool') {
      const t = next();
      if (t !== 'wrk' && t !== 'autocannon') throw new Error('--tool is wrk or autocannon');
      opts.tool = t;
    } else if (a === '--only') {
      const list = next().split(',');
      for (const s of list)
        if (!(SECTIONS as readonly string[]).includes(s)) throw new Error(`unknown section ${s}`);
      opts.only = list as Section[];
    } else throw new Error(`unknown flag ${a}`);
  }
  opts.json ||= opts.out.replace(/BENCHMARKS\.md$/, 'benchmarks.json').replace(/\.md$/, '.json');
  if (opts.json === opts.out) opts.json = `${opts.out}.json`;
  return opts;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const opts = parseBenchArgs(process.argv.slice(2));
  const report = await runBench(opts);
  console.log(`\nwrote ${opts.out} and ${opts.json}`);
  // A section that failed may leave a broker client or a socket open: the report is written, so end.
  process.exit(report.sections.some((s) => s.status === 'failed') ? 1 : 0);
}
