/**
 * Load generators: wrk (preferred: C, one thread, pinned to the load core) and autocannon (from
 * npm, in this process) when wrk is missing. Two modes: saturation (closed loop, as many
 * requests as the server takes) and a paced rate for latency.
 *
 * Pacing: wrk has no rate option (wrk2 is not packaged), so each connection waits `delay()` ms
 * between requests; with C connections that is about C·1000/delay requests per second. The wait
 * is drawn uniformly from [d/2, 3d/2] rather than fixed: with a fixed d the connections do not
 * drift apart but stay in lock-step, and a "1,000/s" run was in fact bunches of up to C requests
 * arriving together (measured at the receiver: 38–50% of arrivals had five or more others within
 * 2 ms, against 8% with the random wait, near the 5% of Poisson arrivals at that rate).
 * autocannon's `overallRate` sends each second's
 * quota back to back at the start of the second, which measures bursts; it is only the fallback.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOAD_CORE, pinned, start, which } from './process.js';
import { percentiles } from './stats.js';

export interface LoadResult {
  tool: 'wrk' | 'autocannon';
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Socket errors and timeouts. */
  errors: number;
  non2xx: number;
}

export interface LoadOptions {
  connections: number;
  durationS: number;
  /** Pin the generator (wrk) to the load core. */
  pin: boolean;
  /** Force autocannon even when wrk is installed. */
  tool?: 'wrk' | 'autocannon';
}

/** Which generator runs: wrk when installed, else autocannon. */
export function loadTool(prefer?: 'wrk' | 'autocannon'): 'wrk' | 'autocannon' {
  if (prefer) return prefer;
  return which('wrk') ? 'wrk' : 'autocannon';
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

const parseDuration = (text: string): number => {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  return m ? Number(m[1]) * UNIT_MS[m[2]!]! : Number.NaN;
};

/** Parses wrk's text report (with `--latency`). Exported for the smoke test of the parser. */
export function parseWrk(out: string): Omit<LoadResult, 'tool'> {
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? Number.NaN);
  const m = /(\d+) requests in ([\d.]+)(us|ms|s|m)/.exec(out);
  const requests = m ? Number(m[1]) : Number.NaN;
  const seconds = m ? (Number(m[2]) * UNIT_MS[m[3]!]!) / 1000 : Number.NaN;
  const pct = (p: string) => {
    const r = new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(out);
    return r ? parseDuration(r[1]!) : Number.NaN;
  };
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  return {
    requests,
    seconds,
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    p50Ms: pct('50'),
    p99Ms: pct('99'),
    errors,
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
  };
}

/**
 * Runs wrk once; `script` is Lua source (written to a temp file) for pacing or dynamic paths.
 * Returns the parsed report and wrk's whole output (a script's `done()` may print to it).
 */
export async function runWrk(
  url: string,
  opts: LoadOptions,
  script?: string,
): Promise<{ result: LoadResult; output: string }> {
  const dir = script ? mkdtempSync(join(tmpdir(), 'hookd-bench-wrk-')) : undefined;
  const args = ['-t1', `-c${opts.connections}`, `-d${opts.durationS}s`, '--latency', '--timeout', '5s'];
  if (dir && script) {
    writeFileSync(join(dir, 'script.lua'), script);
    args.push('-s', join(dir, 'script.lua'));
  }
  args.push(url);
  const [cmd, a] = pinned(opts.pin ? LOAD_CORE : undefined, 'wrk', args);
  try {
    const run = await start(cmd, a);
    const code = await run.exited;
    const output = run.lines.join('\n');
    if (code !== 0) throw new Error(`wrk exited with ${code}: ${run.stderr()}${output}`);
    return { result: { tool: 'wrk', ...parseWrk(output) }, output };
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/** Lua for wrk: a wait of `delayMs` on average, drawn uniformly from [d/2, 3d/2] (module comment). */
export const delayFunction = (delayMs: number): string => {
  const d = Math.max(0, delayMs);
  return `function delay() return math.random(${Math.round(d / 2)}, ${Math.round((d * 3) / 2)}) end\n`;
};

/** Lua for wrk: every connection waits about `delayMs` between requests (see the module comment). */
export const pacingScript = (delayMs: number): string => delayFunction(delayMs);

/**
 * Per-connection delay that gives `rate` requests/s over `connections`, allowing `overheadMs`
 * per request for the response time and wrk's millisecond timer (about 1 ms on loopback).
 */
export const delayFor = (rate: number, connections: number, overheadMs = 1.1): number =>
  Math.max(0, (connections * 1000) / rate - overheadMs);

/**
 * The delay that should give `rate`, from a run at `usedDelayMs` that achieved `achievedRate`:
 * what each request cycle took beyond the delay is taken as the overhead.
 */
export function calibrateDelay(
  rate: number,
  connections: number,
  usedDelayMs: number,
  achievedRate: number,
): number {
  if (!(achievedRate > 0)) return delayFor(rate, connections);
  // Clamped: one run slowed down by a neighbour on the shared machine must not swing the rate.
  const overhead = Math.min(5, Math.max(0, (connections * 1000) / achievedRate - Math.round(usedDelayMs)));
  return delayFor(rate, connections, overhead);
}

type AutocannonFn = (opts: Record<string, unknown>) => AutocannonInstance;
interface AutocannonInstance {
  on(event: 'response', fn: (client: unknown, status: number, bytes: number, ms: number) => void): void;
  on(event: 'done', fn: (result: AutocannonSummary) => void): void;
  on(event: 'error', fn: (err: Error) => void): void;
}
interface AutocannonSummary {
  errors: number;
  timeouts: number;
  non2xx: number;
  duration: number;
  requests: { total: number };
}

/**
 * Runs autocannon in this process. Latencies are collected from its `response` events, in
 * fractional milliseconds (its own histogram keeps whole milliseconds only).
 */
export async function runAutocannon(
  url: string,
  opts: LoadOptions & {
    overallRate?: number;
    requests?: { setupRequest?: (req: Record<string, unknown>) => Record<string, unknown> }[];
  },
): Promise<LoadResult> {
  // autocannon ships no type declarations; it is a CommonJS module.
  const autocannon = createRequire(import.meta.url)('autocannon') as AutocannonFn;
  const latencies: number[] = [];
  const summary = await new Promise<AutocannonSummary>((resolve, reject) => {
    const inst = autocannon({
      url,
      connections: opts.connections,
      duration: opts.durationS,
      ...(opts.overallRate && { overallRate: opts.overallRate }),
      ...(opts.requests && { requests: opts.requests }),
      timeout: 5,
    });
    inst.on('response', (_c, _s, _b, ms) => latencies.push(ms));
    inst.on('done', resolve);
    inst.on('error', reject);
  });
  const p = percentiles(latencies);
  return {
    tool: 'autocannon',
    requests: summary.requests.total,
    seconds: summary.duration,
    rps: summary.requests.total / summary.duration,
    p50Ms: p.p50,
    p99Ms: p.p99,
    errors: summary.errors + summary.timeouts,
    non2xx: summary.non2xx,
  };
}

/** Saturation: the most requests/s the target serves with `connections` in flight. */
export async function saturate(url: string, opts: LoadOptions): Promise<LoadResult> {
  if (loadTool(opts.tool) === 'wrk') return (await runWrk(url, opts)).result;
  return runAutocannon(url, opts);
}

/**
 * A paced load of about `rate` requests/s, for latency away from saturation; `delayMs` (wrk)
 * overrides the computed per-connection delay, e.g. with one from `calibrateDelay`.
 */
export async function paced(
  url: string,
  rate: number,
  opts: LoadOptions,
  delayMs?: number,
): Promise<LoadResult> {
  if (loadTool(opts.tool) === 'wrk') {
    return (await runWrk(url, opts, pacingScript(delayMs ?? delayFor(rate, opts.connections)))).result;
  }
  return runAutocannon(url, { ...opts, overallRate: rate });
}
