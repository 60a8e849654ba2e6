/**
 * Cluster benchmark: delivered callbacks per second for one, two and three hookd instances on one
 * PostgreSQL database, in one run, each instance under an equal CPU quota (its own cgroup) so that
 * the instances, not the two shared cores, are the limit; and PostgreSQL's CPU per callback. Each round gets a fresh database; callbacks are triggered
 * through `POST /report` (batches of 100, spread round-robin over the instances, each answered
 * once its callbacks are recorded) and counted by a receiver in a process of its own that answers
 * 200 at once. The time runs from the first report to the last callback received, so it covers
 * recording, sending and recording each outcome.
 *
 * Run: `npx tsx bench/cluster.ts` or, after `npm run build`, `node dist/bench/cluster.js`.
 * Options: `--callbacks 20000 --rounds 3 --instances 1,2,3 --cpu-quota 0.25 --database-url postgres://…` (the server
 * to create throw-away databases on; default HOOKD_BENCH_DATABASE_URL, else the local server).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
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
import { freePort, HOOKD_BIN, REPO_ROOT, tempDir } from './lib/peers.js';
import { withAdmin } from './lib/pg-admin.js';
import { cpuByComm, type Running, sleep, start } from './lib/process.js';
import { median } from './lib/stats.js';

export interface ClusterBenchOptions {
  /** Callbacks per measurement. */
  callbacks: number;
  /** Callbacks sent before each measurement, not counted (JIT, connections, caches). */
  warmup: number;
  /** Rounds per instance count (the median is reported). */
  rounds: number;
  /** Instance counts to compare (default 1 and 3). */
  instances: number[];
  /** A PostgreSQL server URL on which throw-away databases `hookd_bench_…` are created. */
  databaseUrl: string;
  /**
   * CPU per instance (0.25 = a quarter of one core), each instance in a cgroup of its own, so that
   * the instances and not the machine's two shared cores are the limit (needs root; without it the
   * run says so and goes on without quotas). 0: no quota.
   */
  cpuQuota: number;
  log?: (line: string) => void;
}

export interface ClusterRow {
  instances: number;
  /** Median delivered callbacks per second. */
  perSecond: number;
  min: number;
  max: number;
  /** Median CPU of the PostgreSQL server processes per delivered callback, µs. */
  pgCpuUs: number;
}

export interface ClusterBenchResult {
  options: Omit<ClusterBenchOptions, 'log' | 'databaseUrl'> & { database: string };
  /** Why the quota was not applied, when one was asked for and could not be. */
  quotaSkipped?: string;
  rows: ClusterRow[];
}

export const DEFAULT_CLUSTER_OPTIONS: ClusterBenchOptions = {
  callbacks: 20_000,
  warmup: 3_000,
  rounds: 3,
  instances: [1, 2, 3],
  cpuQuota: 0.25,
  databaseUrl:
    process.env.HOOKD_BENCH_DATABASE_URL ??
    process.env.HOOKD_TEST_DATABASE_URL ??
    'postgres://postgres@127.0.0.1:5432/postgres',
};

const REPORT_BATCH = 100;
const REPORTS_IN_FLIGHT_PER_INSTANCE = 4;

interface Instance {
  url: string;
  running: Running;
  quota?: CpuQuota;
}

/** A hookd on the database, logging warnings only (a line per callback would be what is measured). */
async function startInstance(databaseUrl: string, dataDir: string): Promise<Instance> {
  const port = await freePort();
  const opsPort = await freePort();
  const running = await start(process.execPath, [
    HOOKD_BIN,
    '--database-url',
    databaseUrl,
    '--data-dir',
    dataDir,
    '--listen',
    `127.0.0.1:${port}`,
    '--console-listen',
    '127.0.0.1:0',
    '--ops-listen',
    `127.0.0.1:${opsPort}`,
    '--allow-callback-net',
    '127.0.0.0/8',
    '--log-level',
    'warn',
  ]);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${opsPort}/readyz`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) return { url, running };
    if (running.proc.exitCode !== null) throw new Error(`hookd exited: ${running.stderr()}`);
    if (Date.now() > deadline) {
      await running.stop(1000);
      throw new Error(`hookd not ready within 30 s: ${running.stderr()}`);
    }
    await sleep(50);
  }
}

/** One measurement: `n` instances on a fresh database, `callbacks` delivered. */
async function round(
  opts: ClusterBenchOptions,
  n: number,
  receiver: CountingReceiver,
): Promise<{ perSecond: number; pgCpuUs: number }> {
  const name = `hookd_bench_${randomBytes(5).toString('hex')}`;
  await withAdmin(opts.databaseUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const u = new URL(opts.databaseUrl);
  u.pathname = `/${name}`;
  const dataDir = tempDir('cluster');
  const instances: Instance[] = [];
  const agent = new Agent({ connections: REPORTS_IN_FLIGHT_PER_INSTANCE });
  try {
    // The first creates admin (and its token file); the others join it.
    instances.push(await startInstance(u.toString(), dataDir));
    instances.push(
      ...(await Promise.all(Array.from({ length: n - 1 }, () => startInstance(u.toString(), dataDir)))),
    );
    if (opts.cpuQuota > 0)
      for (const [i, inst] of instances.entries())
        inst.quota = limitCpu(inst.running.pid, opts.cpuQuota, `hookd-bench-${process.pid}-${i}`);
    const token = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
    await createBenchHook(instances[0]!.url, token, receiver.url, agent);
    // Every instance indexes it within a second (LISTEN/NOTIFY); give it that.
    await sleep(1000);
    /** Triggers `count` callbacks and resolves when all have arrived; returns the seconds it took. */
    const burst = (count: number): Promise<number> =>
      reportBurst({
        receiver,
        targets: instances.map((i) => i.url),
        token,
        count,
        batch: REPORT_BATCH,
        inFlight: REPORTS_IN_FLIGHT_PER_INSTANCE,
        path: (i) => `/bench/${i}`,
        post: postWith(agent),
      });
    if (opts.warmup > 0) await burst(opts.warmup);
    const total = Math.ceil(opts.callbacks / REPORT_BATCH) * REPORT_BATCH;
    const pg0 = cpuByComm('postgres');
    const seconds = await burst(total);
    let pgSeconds = 0;
    for (const [pid, now] of cpuByComm('postgres')) pgSeconds += now - (pg0.get(pid) ?? 0);
    return { perSecond: total / seconds, pgCpuUs: (pgSeconds * 1e6) / total };
  } finally {
    await agent.close();
    await Promise.all(instances.map((i) => i.running.stop(10_000)));
    for (const i of instances) i.quota?.remove();
    rmSync(dataDir, { recursive: true, force: true });
    await withAdmin(opts.databaseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
}

/** Undefined when the PostgreSQL server answers; otherwise why the cluster bench cannot run. */
export async function clusterBenchSkipReason(
  databaseUrl = DEFAULT_CLUSTER_OPTIONS.databaseUrl,
): Promise<string | undefined> {
  const c = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    return undefined;
  } catch (err) {
    return `PostgreSQL not reachable at ${redactDatabaseUrl(databaseUrl)} (${(err as Error).message}); set HOOKD_BENCH_DATABASE_URL`;
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Runs the comparison; rounds of the instance counts are interleaved, so drift hits all alike. */
export async function runClusterBench(
  partial: Partial<ClusterBenchOptions> = {},
): Promise<ClusterBenchResult> {
  const opts: ClusterBenchOptions = { ...DEFAULT_CLUSTER_OPTIONS, ...partial };
  const log = opts.log ?? (() => undefined);
  if (!existsSync(join(REPO_ROOT, 'dist', 'src', 'cluster', 'cluster-member.js')))
    throw new Error('dist/ is not built: run `npm run build` first');
  const quotaSkipped = opts.cpuQuota > 0 ? cpuQuotaSkipReason() : undefined;
  if (quotaSkipped) {
    log(`cluster: no CPU quota per instance: ${quotaSkipped}`);
    opts.cpuQuota = 0;
  }
  const receiver = await startCountingReceiver();
  const samples = new Map<number, { perSecond: number; pgCpuUs: number }[]>(
    opts.instances.map((n) => [n, []]),
  );
  try {
    for (let r = 0; r < opts.rounds; r++) {
      for (const n of opts.instances) {
        const m = await round(opts, n, receiver);
        samples.get(n)!.push(m);
        log(
          `cluster: round ${r + 1}/${opts.rounds}, ${n} instance(s): ${m.perSecond.toFixed(0)} callbacks/s, ` +
            `PostgreSQL ${m.pgCpuUs.toFixed(0)} µs CPU per callback`,
        );
      }
    }
  } finally {
    receiver.child.disconnect();
  }
  return {
    options: {
      callbacks: opts.callbacks,
      warmup: opts.warmup,
      rounds: opts.rounds,
      instances: opts.instances,
      cpuQuota: opts.cpuQuota,
      database: redactDatabaseUrl(opts.databaseUrl),
    },
    ...(quotaSkipped && { quotaSkipped }),
    rows: opts.instances.map((n) => {
      const xs = samples.get(n)!.map((m) => m.perSecond);
      return {
        instances: n,
        perSecond: median(xs),
        min: Math.min(...xs),
        max: Math.max(...xs),
        pgCpuUs: median(samples.get(n)!.map((m) => m.pgCpuUs)),
      };
    }),
  };
}

/** The result as a Markdown table with its conditions. */
export function formatClusterBench(r: ClusterBenchResult): string {
  const one = r.rows.find((x) => x.instances === 1);
  const lines = [
    '| instances on one database | delivered callbacks/s (median) | min | max | × one instance | PostgreSQL CPU µs per callback |',
    '|---|---|---|---|---|---|',
    ...r.rows.map(
      (x) =>
        `| ${x.instances} | ${x.perSecond.toFixed(0)} | ${x.min.toFixed(0)} | ${x.max.toFixed(0)} | ` +
        `${one ? (x.perSecond / one.perSecond).toFixed(2) : '—'} | ${x.pgCpuUs.toFixed(0)} |`,
    ),
    '',
    r.options.cpuQuota > 0
      ? `Each instance ran under a CPU quota of ${r.options.cpuQuota} of a core (a cgroup of its own).`
      : `No CPU quota per instance${r.quotaSkipped ? ` (${r.quotaSkipped})` : ''}: the instances share the machine's cores.`,
  ];
  const top = r.rows[r.rows.length - 1];
  if (one && top && top.pgCpuUs > 0) {
    // One PostgreSQL core serves 1e6 / µs-per-callback callbacks a second; an instance delivers
    // one instance's rate, so this many instances would keep that core busy.
    const perCore = 1e6 / top.pgCpuUs;
    lines.push(
      `Projection: at ${top.pgCpuUs.toFixed(0)} µs of PostgreSQL CPU per callback one PostgreSQL core carries ` +
        `about ${perCore.toFixed(0)} callbacks/s, that is about ${(perCore / one.perSecond).toFixed(1)} instances ` +
        `at the one-instance rate measured here.`,
    );
  }
  lines.push(
    '',
    `${r.options.callbacks} callbacks per round after ${r.options.warmup} unmeasured ones (POST /report, ` +
      `batches of ${REPORT_BATCH}, round-robin over the instances), ` +
      `${r.options.rounds} interleaved rounds, a fresh database each; PostgreSQL, the receiver and every ` +
      `instance share this machine's ${cpus().length} cores.`,
  );
  return lines.join('\n');
}

function parseArgs(argv: string[]): Partial<ClusterBenchOptions> {
  const out: Partial<ClusterBenchOptions> = {};
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--callbacks':
        out.callbacks = Number(v);
        i++;
        break;
      case '--warmup':
        out.warmup = Number(v);
        i++;
        break;
      case '--rounds':
        out.rounds = Number(v);
        i++;
        break;
      case '--instances':
        out.instances = v!.split(',').map(Number);
        i++;
        break;
      case '--database-url':
        out.databaseUrl = v!;
        i++;
        break;
      case '--cpu-quota':
        out.cpuQuota = Number(v);
        i++;
        break;
    }
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(fileURLToPath(import.meta.url))) {
  const result = await runClusterBench({ ...parseArgs(process.argv.slice(2)), log: (l) => console.error(l) });
  console.log(formatClusterBench(result));
}
