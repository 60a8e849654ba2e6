/**
 * A rendered Callback URL as a broker transport sends to it, worked out once per URL: parsed,
 * checked and given its link (the receiver key and the credentials' hash are computed then).
 * Most hooks render the same URL for every callback, so a send after the first asks a map,
 * never the URL parser. The map is bounded: URLs rendered from template values may all differ.
 */
import type { BrokerLink } from './link.js';

/** A URL ready to send to, or why nothing can be sent to it (the outcome's text). */
export type Prepared<T, C> =
  | { readonly target: T; readonly link: BrokerLink<C> }
  | { readonly refused: string };

const MAX_URLS = 4096;

export class PreparedTargets<T, C> {
  readonly #byUrl = new Map<string, Prepared<T, C>>();

  constructor(private readonly prepare: (url: string) => Prepared<T, C>) {}

  of(url: string): Prepared<T, C> {
    let p = this.#byUrl.get(url);
    if (p === undefined) {
      p = this.prepare(url);
      // The oldest URL goes first: a map keeps insertion order.
      if (this.#byUrl.size >= MAX_URLS) this.#byUrl.delete(this.#byUrl.keys().next().value as string);
      this.#byUrl.set(url, p);
    }
    return p;
  }
}
