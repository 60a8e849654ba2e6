/**
 * Size: resident memory of a hookd holding N persisted hooks, and its start-up time (spawn to
 * the `listening` log line, which hookd writes once the store is read and the index is built).
 * An empty hookd is measured in the same rounds, alternately, as the baseline.
 */
import { rmSync } from 'node:fs';
import { startHookd, tempDir } from './lib/peers.js';
import { memoryOf, SERVER_CORE, sleep } from './lib/process.js';
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
  log?: (line: string) => void;
}

export interface SizeContender {
  hooks: number;
  startMs: number[];
  rssBytes: number[];
  peakRssBytes: number[];
  summary: { startMs: Spread; rssBytes: Spread; peakRssBytes: Spread };
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
  try {
    await seedHooks(emptyDir, 0);
    const seedMs = await seedHooks(fullDir, opts.hooks);
    log(`size: seeded ${opts.hooks} hooks in ${seedMs.toFixed(0)} ms`);
    const kinds = [
      { hooks: 0, dir: emptyDir },
      { hooks: opts.hooks, dir: fullDir },
    ];
    const results = kinds.map((k) => ({
      hooks: k.hooks,
      startMs: [] as number[],
      rssBytes: [] as number[],
      peakRssBytes: [] as number[],
    }));
    // One unmeasured start of each warms the page cache, as on a server that has run before.
    for (const k of kinds)
      await (await startHookd({ core: opts.pin ? SERVER_CORE : undefined, dataDir: k.dir })).stop();
    // hookd takes about 2 s to stop even when idle: a stop overlaps the other kind's start, and
    // each kind waits for its own previous process to be gone before it starts on that dir again.
    const stopping: Promise<void>[] = kinds.map(() => Promise.resolve());
    for (let round = 0; round < opts.rounds; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) {
        await stopping[i];
        const h = await startHookd({ core: opts.pin ? SERVER_CORE : undefined, dataDir: kinds[i]!.dir });
        try {
          await sleep(opts.settleMs);
          const mem = memoryOf(h.running.pid);
          const r = results[i]!;
          r.startMs.push(h.startMs);
          r.rssBytes.push(mem.rss);
          r.peakRssBytes.push(mem.peak);
          log(
            `size: round ${round + 1} ${r.hooks} hooks: start ${h.startMs.toFixed(0)} ms, RSS ${(mem.rss / 1048576).toFixed(0)} MB`,
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
  }
}

/** The results as a Markdown table with notes. */
export function formatSizeBench(r: SizeBenchResult): string {
  const mb = (n: number) => fmt(n / 1048576, 0);
  const rows = r.contenders.map((c) => [
    c.hooks.toLocaleString('en-US'),
    fmtSpread(c.summary.startMs, (n) => fmt(n, 0)),
    fmtSpread(c.summary.rssBytes, mb),
    fmtSpread(c.summary.peakRssBytes, mb),
  ]);
  const o = r.options;
  const notes = [
    `${o.rounds} alternating rounds; start-up = spawn of \`node bin/hookd.js\` to its \`listening\` line (Node's own start included); ` +
      `RSS read ${o.settleMs} ms after that; ${o.pin ? 'hookd on core 0' : 'not pinned'}.`,
    `About ${fmt(r.bytesPerHook, 0)} bytes of RSS per hook; seeding ${o.hooks.toLocaleString('en-US')} hooks into SQLite took ${fmt(r.seedMs, 0)} ms.`,
  ];
  return `${table(['persisted hooks', 'start-up ms (min–max)', 'RSS MB (min–max)', 'peak RSS MB (min–max)'], rows)}\n\n${notes.map((n) => `- ${n}`).join('\n')}`;
}
