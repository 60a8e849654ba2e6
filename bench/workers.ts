/**
 * Proxied requests/s with `--workers 2` against one process, each event loop under an
 * equal CPU quota (a cgroup of its own, bench/lib/cgroup.ts, as the cluster bench does): on a
 * shared two-core machine two workers cannot show what they add unless each is held to the same
 * fraction of a core as the single process. The 2-worker row's primary gets a quota of its own
 * too (it does next to nothing here: no hook matches). Interleaved rounds; the ratio is per round.
 *
 *   node dist/bench/workers.js [--rounds 5] [--seconds 5] [--cpu-quota 0.25] [--connections 50]
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CpuQuota, cpuQuotaSkipReason, limitCpu } from './lib/cgroup.js';
import { saturate } from './lib/load.js';
import { BENCH_PATH, startHookd, startUpstream, tempDir } from './lib/peers.js';
import { childrenOf, sleep } from './lib/process.js';
import { fmt, ratio, type Spread, spread } from './lib/stats.js';

export interface WorkersBenchOptions {
  rounds: number;
  durationS: number;
  warmupS: number;
  connections: number;
  /** CPU per event loop, of one core; 0: no quota. */
  cpuQuota: number;
  tool?: 'wrk' | 'autocannon';
  log?: (line: string) => void;
}

export interface WorkersBenchResult {
  options: Omit<WorkersBenchOptions, 'log'>;
  quotaSkipped?: string;
  one: Spread;
  two: Spread;
  /** Per-round ratio of 2 workers to one process. */
  ratio: Spread;
  /** Per round of `--workers 2`: how the load fell on each worker. */
  balance: WorkerBalance[];
}

/** One `--workers 2` round: the bench's connections each worker held, and its CPU seconds. */
export interface WorkerBalance {
  connections: number[];
  cpuS: number[];
}

const DEFAULTS: WorkersBenchOptions = {
  rounds: 5,
  durationS: 5,
  warmupS: 2,
  connections: 50,
  cpuQuota: 0.25,
};

/** CPU seconds a process has used so far (utime + stime of /proc/PID/stat, at 100 ticks/s). */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

/**
 * How many established connections to `port` each process holds: with a socket per worker the
 * kernel spreads connections by a hash, so this is how evenly the bench's connections fell.
 */
function connectionsOn(port: number, pids: number[]): number[] {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(f, 'utf8').split('\n').slice(1)) {
      const c = line.trim().split(/\s+/);
      if (c.length > 9 && c[1]!.endsWith(hex) && c[3] === '01') inodes.add(c[9]!);
    }
  }
  return pids.map((pid) => {
    let n = 0;
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m && inodes.has(m[1]!)) n++;
      } catch {
        // closed meanwhile
      }
    }
    return n;
  });
}

async function measure(
  workers: 1 | 2,
  upstream: string,
  o: WorkersBenchOptions,
  round: number,
  balance: WorkerBalance[],
): Promise<number> {
  const hookd = await startHookd({
    core: undefined,
    dataDir: tempDir(`workers${workers}`),
    upstream,
    extraArgs: workers > 1 ? ['--workers', String(workers)] : [],
    timeoutMs: 120_000,
  });
  const quotas: CpuQuota[] = [];
  try {
    if (o.cpuQuota > 0) {
      // Children first out of the primary's group: each event loop in a cgroup of its own.
      quotas.push(limitCpu(hookd.running.pid, o.cpuQuota, `hookd-bench-w${workers}-r${round}-p`));
      const children = childrenOf(hookd.running.pid);
      for (let i = 0; i < children.length; i++)
        quotas.push(limitCpu(children[i]!, o.cpuQuota, `hookd-bench-w${workers}-r${round}-${i}`));
    }
    const url = `${hookd.url}${BENCH_PATH}`;
    const opts = { connections: o.connections, pin: false, ...(o.tool && { tool: o.tool }) };
    if (o.warmupS > 0) await saturate(url, { ...opts, durationS: o.warmupS });
    const children = workers > 1 ? childrenOf(hookd.running.pid) : [];
    const cpu0 = children.map(cpuSeconds);
    let connections: number[] = [];
    const mid = setTimeout(
      () => {
        connections = connectionsOn(Number(new URL(hookd.url).port), children);
      },
      (o.durationS * 1000) / 2,
    );
    const r = await saturate(url, { ...opts, durationS: o.durationS });
    clearTimeout(mid);
    if (workers > 1) {
      const cpuS = children.map((pid, i) => cpuSeconds(pid) - cpu0[i]!);
      balance.push({ connections, cpuS });
      o.log?.(
        `workers: round ${round + 1}, per worker: connections ${connections.join('/')}, CPU ${cpuS.map((c) => fmt(c, 2)).join('/')} s`,
      );
    }
    if (r.errors > 0 || r.non2xx > 0) o.log?.(`workers ${workers}: ${r.errors} errors, ${r.non2xx} non-2xx`);
    return r.rps;
  } finally {
    await hookd.stop();
    await sleep(200);
    for (const q of quotas) q.remove();
  }
}

export async function runWorkersBench(
  partial: Partial<WorkersBenchOptions> = {},
): Promise<WorkersBenchResult> {
  const o: WorkersBenchOptions = { ...DEFAULTS, ...partial };
  const quotaSkipped = o.cpuQuota > 0 ? cpuQuotaSkipReason() : undefined;
  if (quotaSkipped) {
    o.log?.(`workers: no CPU quota: ${quotaSkipped}`);
    o.cpuQuota = 0;
  }
  const upstream = await startUpstream(undefined);
  const ones: number[] = [];
  const twos: number[] = [];
  const balance: WorkerBalance[] = [];
  try {
    for (let r = 0; r < o.rounds; r++) {
      // The order alternates per round, so drift of the machine does not favour one.
      const order: (1 | 2)[] = r % 2 === 0 ? [1, 2] : [2, 1];
      for (const w of order) {
        const rps = await measure(w, upstream.url, o, r, balance);
        (w === 1 ? ones : twos).push(rps);
        o.log?.(
          `workers: round ${r + 1}/${o.rounds}, ${w === 1 ? 'one process' : '2 workers'}: ${fmt(rps, 0)} req/s`,
        );
      }
    }
  } finally {
    await upstream.stop();
  }
  const { log: _log, ...options } = o;
  return {
    options,
    ...(quotaSkipped && { quotaSkipped }),
    one: spread(ones),
    two: spread(twos),
    ratio: ratio(twos, ones),
    balance,
  };
}

export function formatWorkersBench(r: WorkersBenchResult): string {
  const q =
    r.options.cpuQuota > 0
      ? `${r.options.cpuQuota} of a core each`
      : `no quota${r.quotaSkipped ? ` (${r.quotaSkipped})` : ''}`;
  const row = (name: string, s: Spread) =>
    `| ${name} | ${fmt(s.median, 0)} (${fmt(s.min, 0)}–${fmt(s.max, 0)}) |`;
  return [
    '| hookd | proxied req/s (min–max) |',
    '| --- | --- |',
    row('one process (default)', r.one),
    row('--workers 2', r.two),
    '',
    `- 2 workers / one process: ${fmt(r.ratio.median, 2)}× (rounds ${fmt(r.ratio.min, 2)}–${fmt(r.ratio.max, 2)}); CPU quota: ${q}; ` +
      `${r.options.rounds} alternating rounds of ${r.options.durationS} s saturated (${r.options.connections} connections) after ${r.options.warmupS} s of warm-up; no hooks; \`GET ${BENCH_PATH}\`.`,
    `- per worker, each round of \`--workers 2\` (connections held mid-run; CPU s in the measured run): ${r.balance
      .map((b) => `${b.connections.join('/')} conns, ${b.cpuS.map((c) => fmt(c, 2)).join('/')} s`)
      .join('; ')}.`,
  ].join('\n');
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const num = (flag: string): number | undefined => {
    const i = args.indexOf(flag);
    return i === -1 ? undefined : Number(args[i + 1]);
  };
  const r = await runWorkersBench({
    ...(num('--rounds') !== undefined && { rounds: num('--rounds')! }),
    ...(num('--seconds') !== undefined && { durationS: num('--seconds')! }),
    ...(num('--cpu-quota') !== undefined && { cpuQuota: num('--cpu-quota')! }),
    ...(num('--connections') !== undefined && { connections: num('--connections')! }),
    log: console.log,
  });
  console.log(formatWorkersBench(r));
}
