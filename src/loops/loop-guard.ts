/**
 * No loops: what hookd's proxy does with a request that hookd itself sent, or one that
 * has gone round through hookd too often, and how hookd marks what it sends.
 *
 * Two signals, each for what it can prove:
 * - the signed mark (`Hookd-Loop`, loop-marker.ts) proves "hookd sent exactly this request": it
 *   is forwarded to the upstream as usual but fires no hooks, so no callback and no notification
 *   follows from it;
 * - `CDN-Loop` (RFC 8586) counts the passes through hookd, through any other system that keeps
 *   the header on the way: hookd adds its entry to every request it proxies or sends, and
 *   refuses one that already has `MAX_PASSES` of them with 508 Loop Detected. An entry is easy to
 *   forge, so it never makes hookd skip a hook: a forged one only gets the forger's own request
 *   refused before anything is forwarded.
 */
import type { LoopKind, LoopMarker } from './loop-marker.js';
import { MARKER_HEADER } from './loop-marker.js';

/** hookd's `cdn-id` in `CDN-Loop`. */
export const CDN_ID = 'hookd';

/** A request that already went through hookd this many times is refused (508). */
export const MAX_PASSES = 4;

export type CutKind = LoopKind | 'hops';

export interface LoopVerdict {
  /** The request is hookd's own (a valid mark): it fires no hooks. */
  own: LoopKind | undefined;
  /** Refuse with 508: it went through hookd `MAX_PASSES` times already. */
  refuse: boolean;
  /** The request's `CDN-Loop` entries, for the callbacks it fires to carry on; undefined: none. */
  trail: string | undefined;
}

const CLEAN: LoopVerdict = Object.freeze({ own: undefined, refuse: false, trail: undefined });

export class LoopGuard {
  constructor(
    private readonly marker: LoopMarker,
    /** Told of every loop cut (metrics: `hookd_loops_cut_total{kind}`). */
    private readonly onCut: (kind: CutKind) => void = () => undefined,
  ) {}

  /**
   * Reads a proxied request's loop headers. One pass over the raw header list with a length test
   * per name: the common request, with neither header, costs no string beyond that.
   */
  inspect(method: string, url: string, raw: readonly string[]): LoopVerdict {
    let mark: string | undefined;
    let trail: string | undefined;
    for (let i = 0; i < raw.length; i += 2) {
      const n = raw[i]!;
      if (n.length === 8 && n.toLowerCase() === 'cdn-loop') {
        trail = trail === undefined ? raw[i + 1]! : `${trail}, ${raw[i + 1]!}`;
      } else if (n.length === 10 && mark === undefined && n.toLowerCase() === MARKER_HEADER) {
        mark = raw[i + 1]!;
      }
    }
    if (mark === undefined && trail === undefined) return CLEAN;
    if (trail !== undefined && passes(trail) >= MAX_PASSES) {
      this.onCut('hops');
      return { own: undefined, refuse: true, trail };
    }
    const own = mark === undefined ? undefined : this.marker.verify(mark, method, url);
    if (own !== undefined) this.onCut(own);
    return { own, refuse: false, trail };
  }

  /**
   * Marks a request hookd sends (a delivery attempt) in its flat name/value header list: its
   * `CDN-Loop` entry once, the mark on every attempt (it is time-bound). New entries go before
   * `webhook-id`, so the pipeline's per-attempt slots at the ends of the list stay where they are.
   */
  mark(headers: string[], kind: LoopKind, method: string, target: string): void {
    const value = this.marker.mark(kind, method, target);
    // A callback's list keeps its mark last from its previous attempt: set it there, without a scan.
    const last = headers.length - 2;
    if (last >= 0 && headers[last] === MARKER_HEADER) {
      headers[last + 1] = value;
      return;
    }
    for (let i = 0; i < headers.length; i += 2) {
      if (headers[i]!.toLowerCase() === MARKER_HEADER) {
        headers[i + 1] = value;
        return;
      }
    }
    // Appended, never inserted: the per-attempt places of the callback headers (callback-headers.ts)
    // are indices into the same list.
    headers.push('cdn-loop', CDN_ID, MARKER_HEADER, value);
  }
}

/** How many of a `CDN-Loop` list's entries are hookd's (RFC 8586: `cdn-id *( ";" parameter )`). */
export function passes(trail: string): number {
  let n = 0;
  for (const entry of trail.split(',')) {
    const semi = entry.indexOf(';');
    const id = (semi === -1 ? entry : entry.slice(0, semi)).trim().toLowerCase();
    if (id === CDN_ID) n++;
  }
  return n;
}
