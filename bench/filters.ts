/**
 * Filters and transforms (docs/BENCHMARKS.md rows):
 *   - proxy requests/s and p99 with 10,000 hooks none of which reads a body, against another
 *     build without the feature (`--baseline BIN`), interleaved in one run;
 *   - the same hookd with one more hook whose Filter reads a 64 KiB JSON request body, POSTed;
 *   - CEL µs per evaluation; transform µs per run (warm, a 20-line function);
 *   - memory per compiled Filter and per hook with a Transform in the engine, and the sandbox
 *     thread's own memory.
 *
 * Run after `npm run build`: `node dist/bench/filters.js [--baseline /path/to/old/bin/hookd.js]`
 * Options: `--rounds 5 --duration 10 --connections 50 --hooks 10000 --evals 200000 --runs 2000`;
 * `--quick` is a smoke-sized run (seconds, not a measurement).
 */
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { compileFilter, type FilterInput } from '../src/filter/index.js';
import { Transformer } from '../src/transform/index.js';
import { BENCH_PATH, type HookdServer, startHookd, startUpstream, tempDir } from './lib/peers.js';
import { LOAD_CORE, SERVER_CORE } from './lib/process.js';
import { nonMatchingHook, seedHooks } from './lib/seed-hooks.js';
import { fmt, percentiles, spread, table } from './lib/stats.js';

export interface FiltersBenchOptions {
  rounds: number;
  durationS: number;
  connections: number;
  hooks: number;
  evals: number;
  runs: number;
  baselineBin?: string;
  log?: (line: string) => void;
}

const TRANSFORM_20_LINES = `function transform(event) {
  const body = event.response && event.response.body;
  const lines = [];
  lines.push("Write to " + event.request.path);
  if (event.request.query.unit) lines.push("unit: " + event.request.query.unit);
  if (body && typeof body === "object") {
    for (const k of Object.keys(body).slice(0, 5)) {
      lines.push(k + ": " + JSON.stringify(body[k]));
    }
  }
  const who = event.request.user === null ? "someone" : event.request.user;
  lines.push("by " + who);
  const text = lines.join("\\n");
  if (text.length > 2000) {
    return { skip: true };
  }
  return {
    payload: { text: text, hook: event.hook.Id },
    headers: { "X-Chat-Channel": "alerts" },
  };
}`;

const INPUT: FilterInput = {
  request: {
    method: 'PUT',
    path: '/repositories/r1/timeseries/ts1/data',
    uri: 'https://example.com/repositories/r1/timeseries/ts1/data?unit=kWh',
    query: { unit: 'kWh' },
    queryAll: { unit: ['kWh'] },
    headers: { 'content-type': 'application/json', 'x-tenant': 'acme' },
    user: 'alice',
    body: { quality: 'bad', points: Array.from({ length: 50 }, (_, i) => ({ t: i, v: i * 1.5 })) },
    bodyTruncated: false,
  },
  captures: ['r1', 'ts1'],
  response: { status: 204, headers: {}, body: null, bodyTruncated: false },
};

/** µs per evaluation of a realistic filter. */
export function celMicros(evals: number): number {
  const c = compileFilter(
    'request.method == "PUT" && request.query.unit == "kWh" && request.body.quality == "bad" && request.body.points.exists(p, p.v > 10.0)',
  );
  if (!c.ok) throw new Error(c.message);
  for (let i = 0; i < Math.min(evals, 10_000); i++) c.filter.evaluate(INPUT);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < evals; i++)
    if (!c.filter.evaluate(INPUT).matched) throw new Error('filter should match');
  return Number(process.hrtime.bigint() - t0) / 1e3 / evals;
}

/** µs per transform run, warm (one thread, runs one after another). */
export async function transformMicros(runs: number): Promise<{ median: number; p99: number }> {
  const t = new Transformer({ limits: { timeMs: 1000 } });
  const event = {
    ...INPUT,
    hook: { Id: 'hk_1' },
    payload: { text: 'x' },
    callback: { url: 'http://x/', method: 'POST', headers: {} },
  };
  try {
    for (let i = 0; i < Math.min(runs, 200); i++) await t.run(TRANSFORM_20_LINES, event);
    const each: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = process.hrtime.bigint();
      const out = await t.run(TRANSFORM_20_LINES, event);
      each.push(Number(process.hrtime.bigint() - t0) / 1e3);
      if ('error' in out) throw new Error(out.error);
    }
    const p = percentiles(each);
    return { median: p.p50, p99: p.p99 };
  } finally {
    await t.close();
  }
}

/** Heap bytes per compiled Filter (the object the engine keeps per hook version). */
export function bytesPerCompiledFilter(n: number): number {
  globalThis.gc?.();
  const before = process.memoryUsage().heapUsed;
  const kept = [];
  for (let i = 0; i < n; i++) {
    const c = compileFilter(`request.body.quality == "bad${i}" && request.query.unit == "kWh"`);
    if (c.ok) kept.push(c.filter);
  }
  globalThis.gc?.();
  const after = process.memoryUsage().heapUsed;
  if (kept.length !== n) throw new Error('filters did not compile');
  return (after - before) / n;
}

/**
 * What a compiled Transform costs: hookd keeps only its source per hook (a run compiles it in a
 * fresh context), so the cost is the source text, plus the sandbox thread's memory once.
 */
export async function transformMemory(): Promise<{ perHookBytes: number; threadRssBytes: number }> {
  const rss0 = process.memoryUsage().rss;
  const t = new Transformer();
  const event = {
    ...INPUT,
    hook: { Id: 'hk_1' },
    payload: null,
    callback: { url: 'http://x/', method: 'POST', headers: {} },
  };
  await t.run(TRANSFORM_20_LINES, event);
  const rss1 = process.memoryUsage().rss;
  await t.close();
  return { perHookBytes: TRANSFORM_20_LINES.length * 2, threadRssBytes: rss1 - rss0 };
}

interface Load {
  rps: number;
  p99Ms: number;
}

/** `connections` loops of keep-alive requests for `durationS` seconds. */
async function load(
  url: string,
  opts: { connections: number; durationS: number; body?: string },
): Promise<Load> {
  const origin = new URL(url);
  const pool = new Pool(origin.origin, { connections: opts.connections });
  const lat: number[] = [];
  const end = Date.now() + opts.durationS * 1000;
  const loop = async () => {
    while (Date.now() < end) {
      const t0 = performance.now();
      const r = await pool.request({
        path: origin.pathname,
        method: opts.body === undefined ? 'GET' : 'POST',
        ...(opts.body !== undefined && { body: opts.body, headers: { 'content-type': 'application/json' } }),
      });
      await r.body.dump();
      lat.push(performance.now() - t0);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: opts.connections }, loop));
  const seconds = (performance.now() - t0) / 1000;
  await pool.close();
  return { rps: lat.length / seconds, p99Ms: percentiles(lat).p99 };
}

export interface FiltersBenchResult {
  celMicrosPerEval: number;
  transformMicrosPerRun: { median: number; p99: number };
  bytesPerCompiledFilter: number;
  transform: { perHookBytes: number; threadRssBytes: number };
  proxy: { name: string; rps: number[]; p99Ms: number[] }[];
}

export async function runFiltersBench(o: FiltersBenchOptions): Promise<FiltersBenchResult> {
  const log = o.log ?? (() => undefined);
  log('CEL evaluations…');
  const cel = celMicros(o.evals);
  log('transform runs…');
  const tr = await transformMicros(o.runs);
  const perFilter = bytesPerCompiledFilter(2000);
  const trMem = await transformMemory();
  const upstream = await startUpstream(LOAD_CORE);
  const body = JSON.stringify({ quality: 'bad', pad: 'x'.repeat(64 * 1024 - 40) });
  const contenders: { name: string; server: HookdServer; body?: string }[] = [];
  const dirs: string[] = [];
  try {
    const start = async (name: string, bin?: string, reader = false) => {
      const dataDir = tempDir('filters');
      dirs.push(dataDir);
      await seedHooks(dataDir, o.hooks + (reader ? 1 : 0), (i) =>
        i < o.hooks
          ? nonMatchingHook(i, 'http://127.0.0.1:9/never')
          : {
              ...nonMatchingHook(i, 'http://127.0.0.1:9/never'),
              PathPattern: BENCH_PATH,
              Methods: ['POST'],
              Type: 0,
              // Reads the body and never matches: the cost measured is the copy and the parse.
              Filter: 'request.body.quality == "never"',
            },
      );
      const server = await startHookd({
        core: SERVER_CORE,
        dataDir,
        upstream: upstream.url,
        ...(bin !== undefined && { bin }),
      });
      contenders.push({ name, server, ...(reader && { body }) });
    };
    await start(`hookd, ${o.hooks} hooks none reading bodies`);
    if (o.baselineBin) await start(`baseline build, ${o.hooks} hooks`, o.baselineBin);
    await start(`hookd, ${o.hooks} hooks + 1 reading a 64 KiB JSON body (POST)`, undefined, true);
    const results = contenders.map((c) => ({ name: c.name, rps: [] as number[], p99Ms: [] as number[] }));
    for (let round = 0; round < o.rounds; round++) {
      // Interleaved, the order rotating per round.
      for (let k = 0; k < contenders.length; k++) {
        const i = (k + round) % contenders.length;
        const c = contenders[i]!;
        const r = await load(c.server.url + BENCH_PATH, {
          connections: o.connections,
          durationS: o.durationS,
          ...(c.body !== undefined && { body: c.body }),
        });
        results[i]!.rps.push(r.rps);
        results[i]!.p99Ms.push(r.p99Ms);
        log(`round ${round + 1}: ${c.name}: ${fmt(r.rps)} req/s, p99 ${fmt(r.p99Ms)} ms`);
      }
    }
    return {
      celMicrosPerEval: cel,
      transformMicrosPerRun: tr,
      bytesPerCompiledFilter: perFilter,
      transform: trMem,
      proxy: results,
    };
  } finally {
    for (const c of contenders) await c.server.stop();
    await upstream.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

export function formatFiltersBench(r: FiltersBenchResult): string {
  const rows = r.proxy.map((p) => {
    const rps = spread(p.rps);
    const p99 = spread(p.p99Ms);
    return [p.name, fmt(rps.median), fmt(p99.median)];
  });
  return [
    table(['contender', 'req/s (median)', 'p99 ms (median)'], rows),
    '',
    `CEL filter: ${r.celMicrosPerEval.toFixed(2)} µs per evaluation`,
    `transform (20 lines, warm): ${r.transformMicrosPerRun.median.toFixed(0)} µs per run median, p99 ${r.transformMicrosPerRun.p99.toFixed(0)} µs`,
    `compiled Filter: ${fmt(r.bytesPerCompiledFilter)} bytes of heap each`,
    `Transform: ${r.transform.perHookBytes} bytes per hook (its source); the sandbox thread ${fmt(r.transform.threadRssBytes / 2 ** 20)} MiB RSS once`,
  ].join('\n');
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const quick = process.argv.includes('--quick');
  const b = process.argv.indexOf('--baseline');
  const result = await runFiltersBench({
    rounds: arg('rounds', quick ? 1 : 5),
    durationS: arg('duration', quick ? 1 : 10),
    connections: arg('connections', quick ? 4 : 50),
    hooks: arg('hooks', quick ? 100 : 10_000),
    evals: arg('evals', quick ? 1000 : 200_000),
    runs: arg('runs', quick ? 20 : 2000),
    ...(b !== -1 && { baselineBin: process.argv[b + 1]! }),
    log: (l) => console.error(l),
  });
  console.log(formatFiltersBench(result));
}
