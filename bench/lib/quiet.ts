/**
 * Waiting for a quiet machine before a measurement. A figure taken while something else runs
 * (a test suite, a build, the bench's own apt-get) measures the neighbour as much as hookd, so
 * the harness waits until the one-minute load average is below a threshold, up to a deadline,
 * and reports what it found either way: a run that starts busy says so in its report.
 */
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

export interface QuietWait {
  /** The load averages (1, 5, 15 minutes) when the wait began. */
  before: number[];
  /** The load averages when the wait ended. */
  after: number[];
  waitedSeconds: number;
  /** Whether the one-minute load average went below the threshold within the deadline. */
  quiet: boolean;
}

const rounded = () => loadavg().map((x) => Math.round(x * 100) / 100);

/**
 * Resolves once the one-minute load average is below `threshold`, or after `maxSeconds`.
 * The one-minute figure decays by about 1/e a minute, so a load of 2 takes about 1.5 minutes
 * to fall below 0.5 once whatever made it stops.
 */
export async function waitForQuiet(
  threshold: number,
  maxSeconds: number,
  log: (line: string) => void,
  pollMs = 5000,
): Promise<QuietWait> {
  const before = rounded();
  const started = Date.now();
  let announced = false;
  while ((loadavg()[0] ?? 0) >= threshold && Date.now() - started < maxSeconds * 1000) {
    if (!announced) {
      log(`waiting for the load average to fall below ${threshold} (now ${before.join(' ')})`);
      announced = true;
    }
    await sleep(pollMs);
  }
  const after = rounded();
  return {
    before,
    after,
    waitedSeconds: Math.round((Date.now() - started) / 1000),
    quiet: (after[0] ?? 0) < threshold,
  };
}
