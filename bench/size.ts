/**
 * Size: resident memory of a hookd holding N persisted hooks, and its start-up time (spawn to
 * the `listening` log line, which hookd writes once the store is read and the index is built).
 * An empty hookd is measured in the same rounds, alternately, as the baseline; with `--baseline
 * BIN` another build's bin/hookd.js holding the same hooks is measured in the same rounds too.
 *
 * Run: `node dist/bench/size.js --hooks 100000 --rounds 5 [--baseline /old/bin/hookd.js]`.
 */
import { copyFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { STORE_FILE } from '../src/daemon/hookd.js';
import { startHookd, tempDir } from './lib/peers.js';
import { cpuSeconds, memoryOf, SERVER_CORE, sleep } from './lib/process.js';
import { seedHooks } from './lib/seed-hooks.js';
import { fmt, fmtSpread, type Spread, spread, table } from './lib/stats.js';

export interface SizeBenchOptions {
  hooks: number;
  rounds: number;
  /** Wait after `listening` before reading RSS, so start-up garbage has a chance to go. */
  settleMs: number;
  /** Start each hookd once, unmeasured, before the rounds (page cache, as on a server that has run). */
  warmStart: boolean;
  pin: boolean;
  /** Another build's bin/hookd.js, measured with the same hooks in the same rounds (before/after). */
  baselineBin?: string;
  log?: (line: string) => void;
}

export interface SizeContender {
  hooks: number;
  /** Set for the baseline build only. */
  baseline?: string;
  startMs: number[];
  /** CPU time the process had used when it said `listening` (every thread). */
  cpuMs: number[];
  rssBytes: number[];
  peakRssBytes: number[];
  summary: { startMs: Spread; cpuMs: Spread; rssBytes: Spread; peakRssBytes: Spread };
}

export interface SizeBenchResult {
  options: Omit<SizeBenchOptions, 'log'>;
  seedMs: number;
  contenders: SizeContender[];
  /** (RSS with N − RSS empty) / N, from the medians. */
  bytesPerHook: number;
}

/** Measures memory and start-up time; see the module comment. */
export async function runSizeBench(opts: SizeBenchOptions): Promise<SizeBenchResult> {
  const log = opts.log ?? (() => {});
  const emptyDir = tempDir('size0');
  const fullDir = tempDir('sizeN');
  const baseDir = tempDir('sizeB');
  try {
    await seedHooks(emptyDir, 0);
    const seedMs = await seedHooks(fullDir, opts.hooks);
    log(`size: seeded ${opts.hooks} hooks in ${seedMs.toFixed(0)} ms`);
    const kinds: { hooks: number; dir: string; bin?: string }[] = [
      { hooks: 0, dir: emptyDir },
      { hooks: opts.hooks, dir: fullDir },
    ];
    if (opts.baselineBin !== undefined) {
      // The same hooks in a data dir of its own: each kind waits only for its own last process.
      copyFileSync(join(fullDir, STORE_FILE), join(baseDir, STORE_FILE));
      kinds.push({ hooks: opts.hooks, dir: baseDir, bin: opts.baselineBin });
    }
    const results = kinds.map((k) => ({
      hooks: k.hooks,
      ...(k.bin !== undefined && { baseline: k.bin }),
      startMs: [] as number[],
      cpuMs: [] as number[],
      rssBytes: [] as number[],
      peakRssBytes: [] as number[],
    }));
    const start = (k: (typeof kinds)[number]) =>
      startHookd({
        core: opts.pin ? SERVER_CORE : undefined,
        dataDir: k.dir,
        ...(k.bin !== undefined && { bin: k.bin }),
        timeoutMs: 300_000,
      });
    // One unmeasured start of each warms the page cache, as on a server that has run before.
    if (opts.warmStart) for (const k of kinds) await (await start(k)).stop();
    // hookd takes about 2 s to stop even when idle: a stop overlaps the other kind's start, and
    // each kind waits for its own previous process to be gone before it starts on that dir again.
    const stopping: Promise<void>[] = kinds.map(() => Promise.resolve());
    for (let round = 0; round < opts.rounds; round++) {
      const order = kinds.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      for (const i of order) {
        await stopping[i];
        const h = await start(kinds[i]!);
        try {
          const cpuMs = cpuSeconds(h.running.pid) * 1000;
          await sleep(opts.settleMs);
          const mem = memoryOf(h.running.pid);
          const r = results[i]!;
          r.startMs.push(h.startMs);
          r.cpuMs.push(cpuMs);
          r.rssBytes.push(mem.rss);
          r.peakRssBytes.push(mem.peak);
          log(
            `size: round ${round + 1} ${r.hooks} hooks${r.baseline ? ' (baseline)' : ''}: start ${h.startMs.toFixed(0)} ms, CPU ${cpuMs.toFixed(0)} ms, RSS ${(mem.rss / 1048576).toFixed(0)} MB`,
          );
        } finally {
          stopping[i] = h.stop();
        }
      }
    }
    await Promise.all(stopping);
    const contenders = results.map((r) => ({
      ...r,
      summary: {
        startMs: spread(r.startMs),
        cpuMs: spread(r.cpuMs),
        rssBytes: spread(r.rssBytes),
        peakRssBytes: spread(r.peakRssBytes),
      },
    }));
    const { log: _log, ...options } = opts;
    return {
      options,
      seedMs,
      contenders,
      bytesPerHook:
        opts.hooks > 0
          ? (contenders[1]!.summary.rssBytes.median - contenders[0]!.summary.rssBytes.median) / opts.hooks
          : Number.NaN,
    };
  } finally {
    rmSync(emptyDir, { recursive: true, force: true });
    rmSync(fullDir, { recursive: true, force: true });
    rmSync(baseDir, { recursive: true, force: true });
  }
}

/** The results as a Markdown table with notes. */
export function formatSizeBench(r: SizeBenchResult): string {
  const mb = (n: number) => fmt(n / 1048576, 0);
  const rows = r.contenders.map((c) => [
    c.hooks.toLocaleString('en-US') + (c.baseline ? ` (baseline ${c.baseline})` : ''),
    fmtSpread(c.summary.startMs, (n) => fmt(n, 0)),
    fmtSpread(c.summary.cpuMs, (n) => fmt(n, 0)),
    fmtSpread(c.summary.rssBytes, mb),
    fmtSpread(c.summary.peakRssBytes, mb),
  ]);
  const o = r.options;
  const notes = [
    `${o.rounds} alternating rounds; start-up = spawn of \`node bin/hookd.js\` to its \`listening\` line (Node's own start included); ` +
      `RSS read ${o.settleMs} ms after that; ${o.pin ? 'hookd on core 0' : 'not pinned'}.`,
    `About ${fmt(r.bytesPerHook, 0)} bytes of RSS per hook; seeding ${o.hooks.toLocaleString('en-US')} hooks into SQLite took ${fmt(r.seedMs, 0)} ms.`,
  ];
  return `${table(['persisted hooks', 'start-up ms (min–max)', 'CPU ms at listening (min–max)', 'RSS MB (min–max)', 'peak RSS MB (min–max)'], rows)}\n\n${notes.map((n) => `- ${n}`).join('\n')}`;
}

const parseArgs = (argv: string[]): SizeBenchOptions => {
  const opts: SizeBenchOptions = { hooks: 100_000, rounds: 5, settleMs: 1000, warmStart: true, pin: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = argv[i + 1];
    if (a === '--no-pin') opts.pin = false;
    else if (a === '--no-warm') opts.warmStart = false;
    else if (a === '--hooks' && value) opts.hooks = Number(value);
    else if (a === '--rounds' && value) opts.rounds = Number(value);
    else if (a === '--settle' && value) opts.settleMs = Number(value);
    else if (a === '--baseline' && value) opts.baselineBin = resolve(value);
    else continue;
    if (a !== '--no-pin' && a !== '--no-warm') i++;
  }
  return opts;
};

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const r = await runSizeBench({ ...parseArgs(process.argv.slice(2)), log: (l) => console.error(l) });
  console.log(formatSizeBench(r));
}
