/**
 * A body as a filter sees it: the JSON parsed, or the text when it is not JSON; null when there
 * is none or it was over the limit (then `bodyTruncated` is true).
 */
import type { FilterValue } from './variables.js';

/** The bytes kept of a body, up to the limit. */
export interface BodyCopy {
  bytes: Buffer;
  /** More arrived than the limit kept. */
  truncated: boolean;
  /** A body that came as a JSON value (a report's `Body`): given as it is, not parsed again. */
  value?: FilterValue;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b|^text\/json\b/i;

export function parseBody(
  copy: BodyCopy | undefined,
  contentType: string | undefined,
): { body: FilterValue; bodyTruncated: boolean } {
  if (copy === undefined || copy.bytes.length === 0)
    return { body: null, bodyTruncated: copy?.truncated ?? false };
  if (copy.truncated) return { body: null, bodyTruncated: true };
  const text = copy.bytes.toString('utf8');
  // A body without a media type is tried as JSON too: many clients leave it out.
  if (contentType === undefined || contentType === '' || JSON_TYPE.test(contentType)) {
    try {
      return { body: JSON.parse(text) as FilterValue, bodyTruncated: false };
    } catch {
      // Not JSON after all: the text.
    }
  }
  return { body: text, bodyTruncated: false };
}

/** The default of `--filter-body-limit`. */
export const DEFAULT_FILTER_BODY_LIMIT = 64 * 1024;

/**
 * Keeps the first `limit` bytes of a body as it streams past; the chunks themselves go on
 * unchanged. Past the limit it only notes that more came.
 */
export class BodyRecorder {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  #truncated = false;
  #ended = false;

  constructor(private readonly limit: number) {}

  add(chunk: Buffer): void {
    if (this.#truncated) return;
    if (this.#size + chunk.length > this.limit) {
      this.#truncated = true;
      this.#chunks.length = 0;
      return;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
  }

  end(): void {
    this.#ended = true;
  }

  /** What was kept; a body that has not ended is as good as truncated. */
  get copy(): BodyCopy {
    const truncated = this.#truncated || !this.#ended;
    return { bytes: truncated ? Buffer.alloc(0) : Buffer.concat(this.#chunks, this.#size), truncated };
  }
}
