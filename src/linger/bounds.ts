/**
 * How long an early answer keeps reading the body its client is still sending (docs/DECISIONS.md
 * "Lingering close"): at most `totalMs` in all, and at most `silenceMs` without a byte.
 */
export interface LingerBounds {
  totalMs: number;
  silenceMs: number;
}

/** nginx's lingering_time and lingering_timeout. */
export const DEFAULT_LINGER: LingerBounds = { totalMs: 30_000, silenceMs: 5_000 };
