/**
 * Bulk loads without a grown young generation. Everything a bulk load allocates (every stored
 * hook at start-up) lives on, so each scavenge finds almost all of it alive, and V8 answers a
 * high survival rate by doubling the young generation up to its maximum: on Node 24 that left
 * 128 MB of semi-spaces committed after reading 100,000 hooks, more than the hooks themselves
 * (docs/BENCHMARKS.md "Hook index: size and start-up"). Holding the young generation at its
 * size for the load sends the survivors to the old generation all the same, without the extra
 * copying; afterwards it grows again with the traffic as in any Node process.
 */
import { setFlagsFromString } from 'node:v8';

/** V8's default `--semi-space-growth-factor` (`node --v8-options`). */
const DEFAULT_GROWTH = 2;

/** Somebody chose the growth factor (node flag or NODE_OPTIONS): theirs stays. */
const chosen = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) =>
  /semi[-_]space[-_]growth[-_]factor/.test(a),
);

let depth = 0;

/** Runs `load` with the young generation held at its present size; nested and overlapping calls are fine. */
export async function withoutYoungGrowth<T>(load: () => Promise<T>): Promise<T> {
  if (chosen) return load();
  if (depth++ === 0) setFlagsFromString('--semi-space-growth-factor=1');
  try {
    return await load();
  } finally {
    if (--depth === 0) setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH}`);
  }
}
