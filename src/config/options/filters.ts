import { asText, type OptionSpec, refuse } from './spec.js';

const UNITS: Record<string, number> = { '': 1, b: 1, kib: 1024, kb: 1000, mib: 1024 ** 2, mb: 1000 ** 2 };

/** A size: bytes, or a number with KiB, MiB (KB, MB: powers of ten), from `min` to `max` bytes. */
export const byteSize =
  (min: number, max: number) =>
  (v: unknown): number => {
    const m =
      typeof v === 'number'
        ? [String(v), String(v), '']
        : /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(String(v));
    const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
    if (!m || unit === undefined) refuse('must be a size such as 65536, 64KiB or 1MiB');
    const n = Math.round(Number(m[1]) * unit);
    if (n < min || n > max) refuse(`must be from ${min} bytes to ${max / 1024 ** 2} MiB`);
    return n;
  };

const ms =
  (min: number, max: number) =>
  (v: unknown): number => {
    const n = typeof v === 'number' ? v : /^\s*\d+\s*$/.test(String(v)) ? Number(v) : Number.NaN;
    if (!Number.isInteger(n) || n < min || n > max)
      refuse(`must be a whole number of milliseconds from ${min} to ${max}`);
    return n;
  };

/** Hooks' Filters and Transforms (src/filter/, src/transform/). */
export const FILTER_OPTIONS = {
  /**
   * How much of a request or response body is kept for the hooks that read it. 64 KiB holds the
   * JSON of ordinary API writes and answers while bounding what one request can make hookd hold
   * (a body over it is `null` with `bodyTruncated` true, and is still streamed whole).
   */
  filterBodyLimit: {
    fileKey: 'filter.bodyLimit',
    flag: '--filter-body-limit <size>',
    env: 'HOOKD_FILTER_BODY_LIMIT',
    description: 'how much of a body is kept for hooks whose Filter or Transform reads it (default 64KiB)',
    fromText: asText,
    parse: byteSize(0, 64 * 1024 ** 2),
    default: 64 * 1024,
    shownDefault: '64KiB',
  },
  /** The wall time of one Transform run, ms, enforced by an interrupt (default 50). */
  transformTimeLimit: {
    fileKey: 'transform.timeLimit',
    flag: '--transform-time-limit <ms>',
    env: 'HOOKD_TRANSFORM_TIME_LIMIT',
    description: 'wall time of one Transform run, ms (default 50)',
    fromText: asText,
    parse: ms(1, 10_000),
    default: 50,
  },
  /** The sandbox heap of one Transform run (default 16MiB). */
  transformMemoryLimit: {
    fileKey: 'transform.memoryLimit',
    flag: '--transform-memory-limit <size>',
    env: 'HOOKD_TRANSFORM_MEMORY_LIMIT',
    description: 'sandbox memory of one Transform run (default 16MiB)',
    fromText: asText,
    parse: byteSize(1024 ** 2, 1024 ** 3),
    default: 16 * 1024 ** 2,
    shownDefault: '16MiB',
  },
  /** The largest object a Transform may return, as JSON (default 1MiB). */
  transformOutputLimit: {
    fileKey: 'transform.outputLimit',
    flag: '--transform-output-limit <size>',
    env: 'HOOKD_TRANSFORM_OUTPUT_LIMIT',
    description: 'largest object a Transform may return, as JSON (default 1MiB)',
    fromText: asText,
    parse: byteSize(1024, 64 * 1024 ** 2),
    default: 1024 ** 2,
    shownDefault: '1MiB',
  },
} as const satisfies Record<string, OptionSpec>;
