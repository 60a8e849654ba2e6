/**
 * Matching benchmark: the segment-trie MatchIndex against the naive engine it replaces, one
 * RegExp per hook tested in a loop (PERF-NOTES "Matching"). Hooks are realistic patterns of 3–6
 * segments; about 1% of request paths match a hook, the rest share their shapes and prefixes.
 *
 * Run: `npx tsx bench/match.ts` or, after `npm run build`, `node dist/bench/match.js`.
 * Options: `--sizes 1000,10000,100000 --lookups 1000000 --rounds 5 --naive-up-to 100000`.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MatchIndex } from '../src/engine/match-index.js';
import { type CompiledPattern, compilePattern } from '../src/hook/pattern.js';

export interface MatchBenchOptions {
  /** Numbers of hooks to index, one result per size. */
  sizes: number[];
  /** Lookups per round for the MatchIndex; the naive loop does fewer at large sizes (see `naiveLookups`). */
  lookups: number;
  /** Interleaved rounds per size (at least 5 for a meaningful median). */
  rounds: number;
  /**
   * Largest size the RegExp loop runs at (default 100,000): at 1,000,000 hooks its RegExps alone
   * ran out of a 2 GB heap, so larger sizes measure the MatchIndex only.
   */
  naiveUpTo?: number;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface EngineResult {
  /** Nanoseconds per lookup over the rounds. */
  nsPerLookup: Spread;
  lookupsPerRound: number;
  /** Time to build the engine from compiled patterns. */
  buildMs: number;
  /** Heap held by the engine once built and warmed (compiled patterns excluded). */
  heapBytes: number;
}

export interface MatchBenchResult {
  hooks: number;
  rounds: number;
  /** Time to compile every PathPattern (shared by both engines). */
  compileMs: number;
  /** Share of request paths in the pool that matched at least one hook. */
  matchRate: number;
  index: EngineResult & { nodes: number };
  naive: EngineResult;
  /** naive median / index median. */
  speedup: number;
}

const POOL_SIZE = 100_000;
const TARGET_MATCH_RATE = 0.01;

/** Deterministic PRNG (mulberry32), so that every run measures the same hooks and paths. */
const prng = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/** Hook shapes modelled on the seed's API; `{n}` is an id, so hooks differ but share prefixes. */
const SHAPES = [
  '/repositories/repo-{n}/timeseries/(*)',
  '/repositories/*/timeseries/ts-{n}/attributes/(*)',
  '/users/(*)/items/item-{n}/$',
  '/users/user-{n}/items/*',
  '/orgs/org-{n}/projects/(*)/builds/*/$',
  '/api/v1/tenants/t-{n}/events/(*)',
];

const UNRELATED = [
  (n: number) => `/static/js/app.${n}.js`,
  () => '/health',
  (n: number) => `/api/v1/status?probe=${n}`,
  (n: number) => `/repositories/repo-${n}`,
  (n: number) => `/users/u${n}/profile`,
  (n: number) => `/orgs/org-${n}`,
];

const generatePatterns = (size: number, rand: () => number): string[] => {
  const out: string[] = new Array(size);
  for (let i = 0; i < size; i++) {
    const shape = SHAPES[Math.floor(rand() * SHAPES.length)]!;
    out[i] = shape.replace('{n}', String(Math.floor(rand() * size)));
  }
  return out;
};

const token = (rand: () => number): string => {
  const t = `x${Math.floor(rand() * 1e6).toString(36)}`;
  // A few encoded segments, as real clients send them.
  return rand() < 0.02 ? `${t}%20${t}` : t;
};

/** A path that matches `pattern`: literals kept, wildcards filled, maybe more segments. */
const matchingPath = (pattern: CompiledPattern, rand: () => number): string => {
  let path = '';
  for (const s of pattern.segments) path += `/${s.kind === 'literal' ? s.value : token(rand)}`;
  if (!pattern.anchored) {
    const extra = Math.floor(rand() * 3);
    for (let i = 0; i < extra; i++) path += `/${token(rand)}`;
  }
  return rand() < 0.1 ? `${path}?page=${Math.floor(rand() * 10)}` : path;
};

/** A path of the same shapes with ids no hook uses (ids ≥ size), or an unrelated one. */
const missingPath = (size: number, rand: () => number): string => {
  const id = size + Math.floor(rand() * size * 10);
  if (rand() < 0.3) return UNRELATED[Math.floor(rand() * UNRELATED.length)]!(id);
  const shape = SHAPES[Math.floor(rand() * SHAPES.length)]!.replace('{n}', String(id));
  const pattern = compilePattern(shape);
  if (!pattern.ok) throw new Error(pattern.message);
  return matchingPath(pattern.pattern, rand);
};

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The naive engine's RegExp for one hook. It compares raw (not percent-decoded) segments, which
 * is the same as MatchIndex for the literals generated here; the cross-check below relies on that.
 */
const toRegExp = (p: CompiledPattern): RegExp => {
  const body = p.segments
    .map((s) =>
      s.kind === 'literal' ? escapeRegExp(encodeURIComponent(s.value)) : s.capture ? '([^/?#]+)' : '[^/?#]+',
    )
    .join('/');
  return new RegExp(`^/?${body}${p.anchored ? '/?(?:[?#]|$)' : '(?:[/?#]|$)'}`);
};

interface NaiveHook {
  re: RegExp;
  value: number;
}

const naiveMatch = (hooks: NaiveHook[], path: string): { value: number; captures: string[] }[] => {
  const out: { value: number; captures: string[] }[] = [];
  for (let i = 0; i < hooks.length; i++) {
    const h = hooks[i]!;
    const m = h.re.exec(path);
    if (m !== null) out.push({ value: h.value, captures: m.slice(1) });
  }
  return out;
};

const getGc = (): (() => void) => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
};

const heapAfterGc = (gc: () => void): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const elapsedMs = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;

const spread = (xs: number[]): Spread => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]! };
};

/** Lookups per round for the naive loop: about 5·10⁶ RegExp tests, so 100k hooks stay affordable. */
export const naiveLookups = (size: number, lookups: number): number =>
  Math.min(lookups, Math.max(30, Math.floor(5_000_000 / size)));

// Kept in a module variable so that the engines' results cannot be optimised away.
let sink = 0;

const timeLoop = (
  lookup: (path: string) => unknown[],
  pool: string[],
  count: number,
  offset: number,
): number => {
  let j = offset % pool.length;
  let found = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    found += lookup(pool[j]!).length;
    if (++j === pool.length) j = 0;
  }
  const ns = Number(process.hrtime.bigint() - t0);
  sink += found;
  return ns / count;
};

/** Measures MatchIndex and the naive RegExp loop at each size; see MatchBenchResult. */
export async function runMatchBench(opts: MatchBenchOptions): Promise<MatchBenchResult[]> {
  const gc = getGc();
  const results: MatchBenchResult[] = [];
  for (const size of opts.sizes) {
    const rand = prng(0x5eed + size);
    const sources = generatePatterns(size, rand);

    let t0 = process.hrtime.bigint();
    const patterns = sources.map((s) => {
      const r = compilePattern(s);
      if (!r.ok) throw new Error(`${s}: ${r.message}`);
      return r.pattern;
    });
    const compileMs = elapsedMs(t0);

    const pool: string[] = new Array(POOL_SIZE);
    for (let i = 0; i < POOL_SIZE; i++) {
      const path =
        rand() < TARGET_MATCH_RATE
          ? matchingPath(patterns[Math.floor(rand() * size)]!, rand)
          : missingPath(size, rand);
      // Flat, as the HTTP parser hands them over: a concatenated (cons) string would be flattened
      // by the first lookup, which would show up as a heap change and as first-round work.
      pool[i] = Buffer.from(path, 'latin1').toString('latin1');
    }

    let heap0 = heapAfterGc(gc);
    t0 = process.hrtime.bigint();
    const index = new MatchIndex<number>();
    for (let i = 0; i < size; i++) index.set(`hook-${i}`, patterns[i]!, i);
    const indexBuildMs = elapsedMs(t0);
    const indexLookup = (path: string) => index.match(path);
    timeLoop(indexLookup, pool, Math.min(opts.lookups, POOL_SIZE), 0);
    const indexHeap = heapAfterGc(gc) - heap0;

    const withNaive = size <= (opts.naiveUpTo ?? 100_000);
    heap0 = heapAfterGc(gc);
    t0 = process.hrtime.bigint();
    const naive: NaiveHook[] = withNaive ? patterns.map((p, i) => ({ re: toRegExp(p), value: i })) : [];
    const naiveBuildMs = withNaive ? elapsedMs(t0) : Number.NaN;
    const naiveLookup = (path: string) => naiveMatch(naive, path);
    const naiveCount = withNaive ? naiveLookups(size, opts.lookups) : 0;
    timeLoop(naiveLookup, pool, naiveCount, 0);
    const naiveHeap = withNaive ? heapAfterGc(gc) - heap0 : Number.NaN;

    let matched = 0;
    for (const path of pool) if (index.match(path).length > 0) matched++;
    if (withNaive) crossCheck(index, naive, pool, size);

    const indexNs: number[] = [];
    const naiveNs: number[] = [];
    for (let r = 0; r < opts.rounds; r++) {
      // Alternate which engine goes first, so that drift on a shared machine hits both alike.
      const offset = r * 7919;
      if (r % 2 === 0) {
        indexNs.push(timeLoop(indexLookup, pool, opts.lookups, offset));
        naiveNs.push(timeLoop(naiveLookup, pool, naiveCount, offset));
      } else {
        naiveNs.push(timeLoop(naiveLookup, pool, naiveCount, offset));
        indexNs.push(timeLoop(indexLookup, pool, opts.lookups, offset));
      }
    }
    const indexSpread = spread(indexNs);
    const naiveSpread = withNaive
      ? spread(naiveNs)
      : { median: Number.NaN, min: Number.NaN, max: Number.NaN };
    results.push({
      hooks: size,
      rounds: opts.rounds,
      compileMs,
      matchRate: matched / pool.length,
      index: {
        nsPerLookup: indexSpread,
        lookupsPerRound: opts.lookups,
        buildMs: indexBuildMs,
        heapBytes: indexHeap,
        nodes: index.nodeCount,
      },
      naive: {
        nsPerLookup: naiveSpread,
        lookupsPerRound: naiveCount,
        buildMs: naiveBuildMs,
        heapBytes: naiveHeap,
      },
      speedup: naiveSpread.median / indexSpread.median,
    });
    index.clear();
    naive.length = 0;
  }
  if (sink < 0) console.log(sink);
  return results;
}

/** Both engines must agree on what matched, or the comparison means nothing. */
const crossCheck = (index: MatchIndex<number>, naive: NaiveHook[], pool: string[], size: number): void => {
  const budget = Math.max(40, Math.floor(2_000_000 / size));
  let hitsChecked = 0;
  let missesChecked = 0;
  for (const path of pool) {
    if (path.includes('%')) continue;
    const a = index.match(path);
    if (a.length > 0 ? hitsChecked >= budget / 2 : missesChecked >= budget / 2) continue;
    if (a.length > 0) hitsChecked++;
    else missesChecked++;
    const b = naiveMatch(naive, path).sort((x, y) => x.value - y.value);
    const same =
      a.length === b.length &&
      a.every((m, i) => m.value === b[i]!.value && m.captures.join('/') === b[i]!.captures.join('/'));
    if (!same) throw new Error(`engines disagree on ${path}`);
    if (hitsChecked + missesChecked >= budget) break;
  }
};

const fmtNs = (s: Spread): string => {
  if (Number.isNaN(s.median)) return 'not run';
  const f = (n: number) => (n >= 10_000 ? `${(n / 1000).toFixed(0)}µs` : `${n.toFixed(0)}ns`);
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
};

const mb = (bytes: number): string => (Number.isNaN(bytes) ? '—' : `${(bytes / 1048576).toFixed(1)} MB`);

/** The results as a plain-text table. */
export function formatMatchBench(results: MatchBenchResult[]): string {
  const header = [
    'hooks',
    'MatchIndex per lookup (min–max)',
    'RegExp loop per lookup (min–max)',
    'speedup',
    'matched',
    'index heap',
    'nodes',
    'index build',
    'RegExp heap',
    'compile',
  ];
  const rows = results.map((r) => [
    r.hooks.toLocaleString('en-US'),
    fmtNs(r.index.nsPerLookup),
    fmtNs(r.naive.nsPerLookup),
    Number.isNaN(r.speedup) ? '—' : `${r.speedup.toFixed(0)}×`,
    `${(r.matchRate * 100).toFixed(2)}%`,
    mb(r.index.heapBytes),
    r.index.nodes.toLocaleString('en-US'),
    `${r.index.buildMs.toFixed(0)} ms`,
    mb(r.naive.heapBytes),
    `${r.compileMs.toFixed(0)} ms`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  const first = results[0];
  const note = first
    ? `\n${first.rounds} interleaved rounds; MatchIndex ${first.index.lookupsPerRound.toLocaleString('en-US')} lookups/round; ` +
      `RegExp loop ${results.map((r) => `${r.naive.lookupsPerRound}`).join('/')} lookups/round; ` +
      `pool of ${POOL_SIZE.toLocaleString('en-US')} paths; Node ${process.version}`
    : '';
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + note;
}

const parseArgs = (argv: string[]): MatchBenchOptions => {
  const opts: MatchBenchOptions = { sizes: [1_000, 10_000, 100_000], lookups: 1_000_000, rounds: 5 };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    if (argv[i] === '--sizes' && value) opts.sizes = value.split(',').map(Number);
    else if (argv[i] === '--lookups' && value) opts.lookups = Number(value);
    else if (argv[i] === '--rounds' && value) opts.rounds = Number(value);
    else if (argv[i] === '--naive-up-to' && value) opts.naiveUpTo = Number(value);
    else continue;
    i++;
  }
  return opts;
};

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const results = await runMatchBench(parseArgs(process.argv.slice(2)));
  console.log(formatMatchBench(results));
}
