/**
 * Per-hook callback rate limits (`RateLimit: {PerSecond, Burst}`), enforced without dropping
 * anything: an attempt over the rate gets the next free send time and waits in the scheduler
 * until then, like a retry. The limiter is GCRA (the generic cell rate algorithm, a token
 * bucket kept as one "theoretical arrival time" per hook): each attempt reserves the next slot,
 * so a burst of N callbacks goes out as `Burst` at once and then one every `1/PerSecond`,
 * in order, with no polling.
 *
 * Per instance: in a cluster each instance sends the callbacks its own triggers fired at up to
 * the hook's rate (docs/DECISIONS.md "Rate limit per hook").
 */
import type { RateLimit } from '../hook/index.js';
import type { Tracing } from '../tracing/index.js';
import type { Delivery } from './delivery.js';

export type { RateLimit };

interface Bucket {
  /** When the next attempt would be due at the steady rate (epoch ms). */
  tat: number;
}

// Buckets of hooks that have been idle long enough to be full again are dropped now and then.
const SWEEP_EVERY = 4096;

export class HookRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private reservations = 0;

  /**
   * Reserves the next send slot of the hook: returns how long, from `now`, the attempt must wait
   * (0: it may go now).
   */
  reserve(hookId: string, limit: RateLimit, now: number): number {
    const interval = 1000 / limit.PerSecond;
    const tolerance = (limit.Burst - 1) * interval;
    let b = this.buckets.get(hookId);
    if (b === undefined) {
      b = { tat: now };
      this.buckets.set(hookId, b);
      if (++this.reservations % SWEEP_EVERY === 0) this.sweep(now);
    }
    const tat = Math.max(b.tat, now);
    const allowedAt = tat - tolerance;
    b.tat = tat + interval;
    return allowedAt > now ? allowedAt - now : 0;
  }

  /** The hook was deleted or changed its limit: it starts with a full bucket. */
  forget(hookId: string): void {
    this.buckets.delete(hookId);
  }

  get size(): number {
    return this.buckets.size;
  }

  private sweep(now: number): void {
    for (const [id, b] of this.buckets) if (b.tat <= now) this.buckets.delete(id);
  }
}

/** The pipeline's options of rate limits and tracing. */
export interface PerHookOptions {
  /** Told of each attempt a rate limit holds back, with the wait in ms (metrics). */
  onRateWait?: (ms: number) => void;
  /** OpenTelemetry (src/tracing/); absent while tracing is off. */
  tracing?: Tracing;
}

/**
 * How long the rate limits have held each delivery's next attempt back so far, ms: added to by the
 * gate, read by the attempt's span and settled into its log record. Weakly held, so a delivery
 * that ends or is cancelled takes its figure along.
 */
export class RateWaits {
  private readonly ms = new WeakMap<Delivery, number>();
  /**
   * Figures added and not yet settled (one a delivery took along without a recorded attempt, cancelled
   * or ended unsent, stays counted): while none is, an attempt's lookups are skipped, so hooks
   * without a rate limit pay nothing for them.
   */
  private open = 0;

  add(d: Delivery, wait: number): void {
    const w = this.ms.get(d);
    if (w === undefined) this.open++;
    this.ms.set(d, (w ?? 0) + wait);
  }

  of(d: Delivery): number {
    return this.open === 0 ? 0 : (this.ms.get(d) ?? 0);
  }

  /** The wait so far, and none from here on: the attempt it held back is being recorded. */
  settle(d: Delivery): number {
    if (this.open === 0) return 0;
    const w = this.ms.get(d);
    if (w === undefined) return 0;
    this.ms.delete(d);
    this.open--;
    return w;
  }
}

export interface RateGateOptions {
  /** The rate a verified origin allowed (`WebHook-Allowed-Rate`), for plans without a limit of their own. */
  allowedRate: (origin: string) => RateLimit | undefined;
  /** Where each hold's wait is added up for the attempt it holds back. */
  waits: RateWaits;
  /** Puts a held delivery back in the scheduler (due at its `nextAttempt`). */
  later: (d: Delivery) => void;
  /** Told of each hold, with the wait in ms (metrics). */
  onWait?: (ms: number) => void;
  now?: () => number;
}

/** Where the pipeline asks, before an attempt takes a slot, whether the hook's rate allows it now. */
export class RateGate {
  readonly limiter = new HookRateLimiter();
  /**
   * Deliveries given a later send time whose reserved slot is already counted: they pass when they
   * come back. Weakly held, so a cancelled one leaves nothing behind.
   */
  private readonly reserved = new WeakSet<Delivery>();

  constructor(private readonly opts: RateGateOptions) {}

  /**
   * True when the delivery must wait: it was given its send time and handed to `later`. A
   * delivery coming back at its reserved time passes (its slot is already counted).
   */
  hold(d: Delivery, now: number): boolean {
    if (this.reserved.delete(d)) return false;
    const plan = d.plan;
    const limit =
      plan.rateLimit ??
      (plan.allowedRateOrigin === undefined ? undefined : this.opts.allowedRate(plan.allowedRateOrigin));
    if (limit === undefined) return false;
    const wait = this.limiter.reserve(d.hookId, limit, now);
    if (wait <= 0) return false;
    this.reserved.add(d);
    this.opts.waits.add(d, wait);
    d.nextAttempt = now + wait;
    this.opts.onWait?.(wait);
    this.opts.later(d);
    return true;
  }
}
