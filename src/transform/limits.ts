/** What one run of a transform may use. Each is an option of the daemon (`transform.*`). */
export interface TransformLimits {
  /** Wall time of one run, enforced by QuickJS's interrupt handler (default 50 ms). */
  timeMs: number;
  /** The sandbox's heap (default 16 MiB): a run that allocates more fails. */
  memoryBytes: number;
  /** The sandbox's stack (default 256 KiB): deep recursion fails inside, never in Node. */
  stackBytes: number;
  /** The returned object as JSON (default 1 MiB). */
  outputBytes: number;
}

/**
 * 50 ms is ten times what a 20-line function takes and short enough that a runaway one costs a
 * worker little; 16 MiB holds a JSON answer many times the 64 KiB body limit; 1 MiB is more than
 * any chat message or receiver payload needs.
 */
export const DEFAULT_TRANSFORM_LIMITS: Readonly<TransformLimits> = Object.freeze({
  timeMs: 50,
  memoryBytes: 16 * 1024 * 1024,
  stackBytes: 256 * 1024,
  outputBytes: 1024 * 1024,
});

/** The longest Transform source accepted, in characters. */
export const MAX_TRANSFORM_LENGTH = 65536;

export function describeBytes(n: number): string {
  if (n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}
