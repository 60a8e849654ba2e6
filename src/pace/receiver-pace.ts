/**
 * The pace every receiver sets: an adaptive concurrency limit per receiver key (the transport's
 * isolation key), fed by the answers of the attempts sent to it. The fairness limiter asks it
 * for a receiver's limit through `limitFor`; with adaptation off every receiver's limit is the
 * configured maximum and the answers are not learned from.
 */
import { AdaptiveLimit, type PaceNote, type PaceSample } from './adaptive-limit.js';

/** What the fairness limiter asks: how many attempts one endpoint of this receiver may hold. */
export interface EndpointCap {
  limitFor(receiver: string): number;
}

/** A receiver forgotten after this long without an attempt (its limit starts over at the maximum). */
const IDLE_MS = 10 * 60_000;

interface Entry {
  readonly limit: AdaptiveLimit;
  inFlight: number;
  lastUsed: number;
}

export class ReceiverPace implements EndpointCap {
  private readonly receivers = new Map<string, Entry>();

  constructor(
    /** The configured per-endpoint maximum. */
    readonly max: number,
    readonly adaptive: boolean,
    /** A Callback URL's receiver key (its transport's `receiverKey`). */
    private readonly keyOf: (url: URL) => string = (u) => `${u.protocol}//${u.host}`,
    private readonly now: () => number = Date.now,
  ) {}

  /** The receiver key of a Callback as written; undefined when it does not parse (templates in the host). */
  receiverOf(callback: string): string | undefined {
    try {
      return this.keyOf(new URL(callback));
    } catch {
      return undefined;
    }
  }

  /** One receiver's limit now (the maximum for one not attempted lately) and why it is lower. */
  current(receiver: string): { limit: number; max: number; note?: PaceNote } {
    const note = this.adaptive ? this.receivers.get(receiver)?.limit.note : undefined;
    return { limit: this.limitFor(receiver), max: this.max, ...(note !== undefined && { note }) };
  }

  limitFor(receiver: string): number {
    if (!this.adaptive) return this.max;
    return this.receivers.get(receiver)?.limit.limit ?? this.max;
  }

  /** An attempt to `receiver` goes out; returns its in-flight count, itself included. */
  sent(receiver: string): number {
    let e = this.receivers.get(receiver);
    if (e === undefined) {
      e = { limit: new AdaptiveLimit({ max: this.max }), inFlight: 0, lastUsed: 0 };
      this.receivers.set(receiver, e);
    }
    e.lastUsed = this.now();
    return ++e.inFlight;
  }

  /** The answer to an attempt `sent` counted; `inFlight` is what `sent` returned. */
  answered(receiver: string, sample: PaceSample): void {
    const e = this.receivers.get(receiver);
    if (e === undefined) return;
    e.inFlight = Math.max(0, e.inFlight - 1);
    if (this.adaptive) e.limit.observe(sample);
  }

  /** Every receiver attempted lately and its current limit (metrics, console, API). */
  *limits(): Generator<{ receiver: string; limit: number; max: number }> {
    const cutoff = this.now() - IDLE_MS;
    for (const [receiver, e] of this.receivers) {
      if (e.inFlight === 0 && e.lastUsed < cutoff) {
        this.receivers.delete(receiver);
        continue;
      }
      yield { receiver, limit: this.adaptive ? e.limit.limit : this.max, max: this.max };
    }
  }
}
