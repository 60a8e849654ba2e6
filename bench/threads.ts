/**
 * Delivery threads benchmark: delivered callbacks per second of one hookd whose core's loop sends
 * its callbacks (`--delivery-threads 0`) under a CPU quota Q, against one sending them on two
 * delivery threads under 2Q, on SQLite and on PostgreSQL. The quota covers the whole process (the
 * core, the executors, the store's checkpoint thread), so the ratio says what the threads give for
 * the CPU they are given; Q is small enough that hookd, not the machine, is the limit. Callbacks
 * are triggered through `POST /_hookd/report` in batches of 100 and counted by a receiver in a
 * process of its own; the time runs from the first report to the last callback received. Rounds
 * interleave the contenders; each gets a fresh data dir (and a fresh database).
 *
 * Run: `node dist/bench/threads.js --callbacks 20000 --rounds 3 --cpu-quota 0.4 --stores sqlite,postgres`.
 */
import { rmSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent } from 'undici';
import { redactDatabaseUrl } from '../src/config/load-config.js';
import { type CpuQuota, cpuQuotaSkipReason, limitCpu } from './lib/cgroup.js';
import {
  type CountingReceiver,
  createBenchHook,
  postWith,
  reportBurst,
  startCountingReceiver,
} from './lib/count-receiver.js';
import { tempDir } from './lib/peers.js';
import { throwawayDatabase } from './lib/pg-admin.js';
import { cpuByThread, cpuSeconds, sleep } from './lib/process.js';
import { startQuietHookd } from './lib/quiet-hookd.js';
import { median, table } from './lib/stats.js';

export type ThreadsStore = 'sqlite' | 'postgres';

export interface ThreadsBenchOptions {
  callbacks: number;
  warmup: number;
  rounds: number;
  /** CPU of the one-loop hookd (0.4 = 40 % of a core); the threaded one gets twice this. 0: none. */
  cpuQuota: number;
  /** Delivery threads of the threaded contender. */
  threads: number;
  stores: ThreadsStore[];
  databaseUrl: string;
  log?: (line: string) => void;
}

export interface ThreadsRow {
  store: ThreadsStore;
  threads: number;
  /** The quota the contender ran under, in cores (0: none). */
  quota: number;
  perSecond: number;
  min: number;
  max: number;
  /** Median CPU of the hookd process (every thread) per delivered callback, µs. */
  cpuUs: number;
  /** Of which: the main thread (the core: intake, store, scheduling, signing), µs per callback. */
  coreUs: number;
  /** Of which: the delivery threads together, µs per callback. */
  sendersUs: number;
  /** Of which: the SQLite writer thread, µs per callback (0: none, the main thread writes). */
  writerUs: number;
}

export interface ThreadsBenchResult {
  options: Omit<ThreadsBenchOptions, 'log' | 'databaseUrl'> & { database: string };
  quotaSkipped?: string;
  rows: ThreadsRow[];
  /** Per store: the threaded rate over the one-loop rate, median and range of the per-round ratios. */
  ratios: { store: ThreadsStore; median: number; min: number; max: number }[];
}

export const DEFAULT_THREADS_OPTIONS: ThreadsBenchOptions = {
  callbacks: 20_000,
  warmup: 3_000,
  rounds: 3,
  cpuQuota: 0.4,
  threads: 2,
  stores: ['sqlite', 'postgres'],
  databaseUrl:
    process.env.HOOKD_BENCH_DATABASE_URL ??
    process.env.HOOKD_TEST_DATABASE_URL ??
    'postgres://postgres@127.0.0.1:5432/postgres',
};

const REPORT_BATCH = 100;

interface Sample {
  perSecond: number;
  cpuUs: number;
  coreUs: number;
  sendersUs: number;
  writerUs: number;
}
const REPORTS_IN_FLIGHT = 4;

/** One measurement of one contender: a fresh hookd (and database), warmed up, then `callbacks` delivered. */
async function measure(
  opts: ThreadsBenchOptions,
  store: ThreadsStore,
  threads: number,
  quota: number,
  receiver: CountingReceiver,
): Promise<Sample> {
  const dataDir = tempDir('threads');
  const db = store === 'postgres' ? await throwawayDatabase(opts.databaseUrl) : undefined;
  const databaseUrl = db?.url;
  const agent = new Agent({ connections: REPORTS_IN_FLIGHT });
  let cgroup: CpuQuota | undefined;
  const hookd = await startQuietHookd({
    dataDir,
    ...(databaseUrl && { databaseUrl }),
    extraArgs: ['--delivery-threads', String(threads)],
  });
  try {
    if (quota > 0) cgroup = limitCpu(hookd.running.pid, quota, `hookd-bench-threads-${process.pid}`);
    await createBenchHook(hookd.url, hookd.token, receiver.url, agent);
    await sleep(200);
    const burst = (count: number) =>
      reportBurst({
        receiver,
        targets: [hookd.url],
        token: hookd.token,
        count,
        batch: REPORT_BATCH,
        inFlight: REPORTS_IN_FLIGHT,
        path: (i) => `/bench/${i}`,
        post: postWith(agent),
      });
    if (opts.warmup > 0) await burst(opts.warmup);
    const total = Math.ceil(opts.callbacks / REPORT_BATCH) * REPORT_BATCH;
    const pid = hookd.running.pid;
    const cpu0 = cpuSeconds(pid);
    const byThread0 = cpuByThread(pid);
    const seconds = await burst(total);
    const cpu = cpuSeconds(pid) - cpu0;
    const byThread = cpuByThread(pid);
    const used = (pick: (name: string) => boolean) => {
      let sum = 0;
      for (const [name, s] of byThread) if (pick(name)) sum += s - (byThread0.get(name) ?? 0);
      return (sum * 1e6) / total;
    };
    return {
      perSecond: total / seconds,
      cpuUs: (cpu * 1e6) / total,
      coreUs: used((name) => name === 'hookd'),
      sendersUs: used((name) => name.startsWith('hookd sender')),
      // Linux cuts a thread's name at 15 characters: "hookd sqlite writer" is "hookd sqlite wr".
      writerUs: used((name) => name.startsWith('hookd sqlite w')),
    };
  } finally {
    await agent.close();
    await hookd.running.stop(10_000);
    cgroup?.remove();
    rmSync(dataDir, { recursive: true, force: true });
    await db?.drop();
  }
}

export async function runThreadsBench(
  partial: Partial<ThreadsBenchOptions> = {},
): Promise<ThreadsBenchResult> {
  const opts: ThreadsBenchOptions = { ...DEFAULT_THREADS_OPTIONS, ...partial };
  const log = opts.log ?? (() => undefined);
  const quotaSkipped = opts.cpuQuota > 0 ? cpuQuotaSkipReason() : undefined;
  if (quotaSkipped) {
    log(`threads: no CPU quota: ${quotaSkipped}`);
    opts.cpuQuota = 0;
  }
  const contenders = opts.stores.flatMap((store) => [
    { store, threads: 0, quota: opts.cpuQuota },
    { store, threads: opts.threads, quota: opts.cpuQuota * opts.threads },
  ]);
  const samples = contenders.map(() => [] as Sample[]);
  const receiver = await startCountingReceiver();
  try {
    for (let r = 0; r < opts.rounds; r++) {
      // The order rotates per round, so that drift on the machine hits every contender alike.
      for (let k = 0; k < contenders.length; k++) {
        const i = (k + r) % contenders.length;
        const c = contenders[i]!;
        const m = await measure(opts, c.store, c.threads, c.quota, receiver);
        samples[i]!.push(m);
        log(
          `threads: round ${r + 1}/${opts.rounds}, ${c.store}, ${c.threads} delivery thread(s)` +
            `${c.quota ? ` under ${c.quota} CPU` : ''}: ${m.perSecond.toFixed(0)} callbacks/s, ${m.cpuUs.toFixed(0)} µs CPU each ` +
            `(main thread ${m.coreUs.toFixed(0)}, delivery threads ${m.sendersUs.toFixed(0)}, ` +
            `SQLite writer ${m.writerUs.toFixed(0)})`,
        );
      }
    }
  } finally {
    receiver.child.disconnect();
  }
  const rows = contenders.map((c, i) => {
    const xs = samples[i]!.map((m) => m.perSecond);
    return {
      ...c,
      perSecond: median(xs),
      min: Math.min(...xs),
      max: Math.max(...xs),
      cpuUs: median(samples[i]!.map((m) => m.cpuUs)),
      coreUs: median(samples[i]!.map((m) => m.coreUs)),
      sendersUs: median(samples[i]!.map((m) => m.sendersUs)),
      writerUs: median(samples[i]!.map((m) => m.writerUs)),
    };
  });
  const ratios = opts.stores.map((store) => {
    const one = contenders.findIndex((c) => c.store === store && c.threads === 0);
    const many = contenders.findIndex((c) => c.store === store && c.threads > 0);
    const per = samples[many]!.map((m, r) => m.perSecond / samples[one]![r]!.perSecond);
    return { store, median: median(per), min: Math.min(...per), max: Math.max(...per) };
  });
  return {
    options: {
      callbacks: opts.callbacks,
      warmup: opts.warmup,
      rounds: opts.rounds,
      cpuQuota: opts.cpuQuota,
      threads: opts.threads,
      stores: opts.stores,
      database: redactDatabaseUrl(opts.databaseUrl),
    },
    ...(quotaSkipped && { quotaSkipped }),
    rows,
    ratios,
  };
}

export function formatThreadsBench(r: ThreadsBenchResult): string {
  const lines = [
    table(
      [
        'store',
        'delivery threads',
        'CPU quota',
        'delivered callbacks/s (median)',
        'min',
        'max',
        'hookd CPU µs per callback',
        'main thread µs',
        'delivery threads µs',
        'SQLite writer µs',
      ],
      r.rows.map((x) => [
        x.store,
        x.threads === 0 ? '0 (the core loop sends)' : String(x.threads),
        x.quota ? `${x.quota} core` : 'none',
        x.perSecond.toFixed(0),
        x.min.toFixed(0),
        x.max.toFixed(0),
        x.cpuUs.toFixed(0),
        x.coreUs.toFixed(0),
        x.threads === 0 ? '—' : x.sendersUs.toFixed(0),
        x.writerUs === 0 ? '—' : x.writerUs.toFixed(0),
      ]),
    ),
    '',
    ...r.ratios.map(
      (x) =>
        `${x.store}: ${r.options.threads} threads under twice the quota deliver ${x.median.toFixed(2)}× ` +
        `(rounds ${x.min.toFixed(2)}–${x.max.toFixed(2)}) the callbacks/s of the core loop alone.`,
    ),
    '',
    `${r.options.callbacks} callbacks per measurement after ${r.options.warmup} unmeasured ones (POST /_hookd/report, ` +
      `batches of ${REPORT_BATCH}), ${r.options.rounds} interleaved rounds, a fresh hookd each; ` +
      (r.options.cpuQuota > 0
        ? `each hookd in a cgroup of its own, the whole process counted; `
        : `no CPU quota${r.quotaSkipped ? ` (${r.quotaSkipped})` : ''}; `) +
      `the receiver, PostgreSQL and the load share this machine's ${cpus().length} cores.`,
  ];
  return lines.join('\n');
}

function parseArgs(argv: string[]): Partial<ThreadsBenchOptions> {
  const out: Partial<ThreadsBenchOptions> = {};
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1] ?? '';
    const flag = argv[i];
    if (flag === '--callbacks') out.callbacks = Number(v);
    else if (flag === '--warmup') out.warmup = Number(v);
    else if (flag === '--rounds') out.rounds = Number(v);
    else if (flag === '--cpu-quota') out.cpuQuota = Number(v);
    else if (flag === '--threads') out.threads = Number(v);
    else if (flag === '--stores') out.stores = v.split(',') as ThreadsStore[];
    else if (flag === '--database-url') out.databaseUrl = v;
    else continue;
    i++;
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(fileURLToPath(import.meta.url))) {
  const result = await runThreadsBench({ ...parseArgs(process.argv.slice(2)), log: (l) => console.error(l) });
  console.log(formatThreadsBench(result));
}
