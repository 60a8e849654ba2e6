/**
 * Fair sharing of outgoing attempts: a global concurrency limit, a per-destination limit and a
 * per-destination circuit breaker, so that a hanging or failing receiver holds at most its own
 * share of slots and never delays callbacks to others. Destinations with waiting attempts take
 * free global slots in turn (round robin), not in arrival order, so one destination's burst
 * cannot starve another's single callback.
 */
import {
  type BreakerOptions,
  CircuitBreaker,
  DEFAULT_BREAKER,
  type DestinationOutcome,
} from './circuit-breaker.js';

export interface FairnessLimits {
  /** Attempts in flight at once, over all destinations (default 256). */
  concurrency: number;
  /** Attempts in flight at once to one destination (origin: scheme, host, port) (default 16). */
  perDestination: number;
  breaker: BreakerOptions;
}

export const DEFAULT_LIMITS: FairnessLimits = Object.freeze({
  concurrency: 256,
  perDestination: 16,
  breaker: DEFAULT_BREAKER,
});

/** A FIFO that does not shift arrays: a head index, compacted now and then. */
class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  drain(): T[] {
    const out = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return out;
  }
}

class Destination<J> {
  inFlight = 0;
  inRing = false;
  readonly queue = new Fifo<J>();
  readonly breaker: CircuitBreaker;

  constructor(
    readonly key: string,
    breaker: BreakerOptions,
  ) {
    this.breaker = new CircuitBreaker(breaker, key);
  }
}

/** A job names its destination. */
export interface Routed {
  origin: string;
}

/**
 * Starts jobs within the limits. `run(job, probe)` starts one and the caller reports its end with
 * `done(job, outcome, probe)`; `shed(job, reason)` is called instead of `run` for a job whose
 * destination's circuit is open, so it can be rescheduled without being sent.
 */
export class FairLimiter<J extends Routed> {
  private readonly destinations = new Map<string, Destination<J>>();
  private readonly ring = new Fifo<Destination<J>>();
  private running = 0;
  private waiting = 0;
  private paused = false;

  constructor(
    private readonly limits: FairnessLimits,
    private readonly run: (job: J, probe: boolean) => void,
    private readonly shed: (job: J, reason: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Attempts in flight. */
  get inFlight(): number {
    return this.running;
  }

  /** Jobs waiting for a slot. */
  get queued(): number {
    return this.waiting;
  }

  submit(job: J): void {
    const dest = this.destination(job.origin);
    const now = this.now();
    if (dest.breaker.blocking(now)) {
      this.shed(job, this.openReason(dest, now));
      this.release(dest);
      return;
    }
    if (
      !this.paused &&
      this.running < this.limits.concurrency &&
      dest.inFlight < this.limits.perDestination &&
      dest.queue.length === 0
    ) {
      this.start(dest, job, now);
      return;
    }
    dest.queue.push(job);
    this.waiting++;
    if (!dest.inRing && dest.inFlight < this.limits.perDestination) this.enqueue(dest);
  }

  /** Reports the end of a job that `run` started. */
  done(job: J, outcome: DestinationOutcome, probe: boolean): void {
    const dest = this.destinations.get(job.origin);
    this.running--;
    if (!dest) return;
    dest.inFlight--;
    const now = this.now();
    if (dest.breaker.record(outcome, probe, now)) {
      // Open: what waits for this destination is skipped now rather than after the slow ones end.
      const reason = this.openReason(dest, now);
      const skipped = dest.queue.drain();
      this.waiting -= skipped.length;
      for (const j of skipped) this.shed(j, reason);
    }
    if (dest.queue.length > 0 && !dest.inRing) this.enqueue(dest);
    this.release(dest);
    this.pump();
  }

  /** Starts no more jobs until `resume`; queued ones stay queued. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }

  /** The circuit state of every destination that has one other than a fresh closed circuit. */
  *breakers(): Generator<{ destination: string; state: 'closed' | 'half-open' | 'open' }> {
    for (const d of this.destinations.values()) {
      if (!d.breaker.pristine) yield { destination: d.key, state: d.breaker.state };
    }
  }

  /** Removes and returns every queued job (shutdown leaves them to the store as pending). */
  drainQueued(): J[] {
    const out: J[] = [];
    for (const dest of this.destinations.values()) {
      for (const j of dest.queue.drain()) out.push(j);
    }
    this.waiting = 0;
    return out;
  }

  private start(dest: Destination<J>, job: J, now: number): void {
    const permit = dest.breaker.allow(now);
    if (permit === 'skip') {
      this.shed(job, this.openReason(dest, now));
      return;
    }
    dest.inFlight++;
    this.running++;
    this.run(job, permit === 'probe');
  }

  private pump(): void {
    while (!this.paused && this.running < this.limits.concurrency) {
      const dest = this.ring.shift();
      if (dest === undefined) return;
      dest.inRing = false;
      if (dest.inFlight >= this.limits.perDestination) continue;
      const job = dest.queue.shift();
      if (job === undefined) continue;
      this.waiting--;
      this.start(dest, job, this.now());
      if (dest.queue.length > 0 && dest.inFlight < this.limits.perDestination) this.enqueue(dest);
      else this.release(dest);
    }
  }

  private enqueue(dest: Destination<J>): void {
    dest.inRing = true;
    this.ring.push(dest);
  }

  private destination(key: string): Destination<J> {
    let d = this.destinations.get(key);
    if (d === undefined) {
      d = new Destination<J>(key, this.limits.breaker);
      this.destinations.set(key, d);
    }
    return d;
  }

  /** Forgets a destination that holds nothing: no work, no breaker history. */
  private release(dest: Destination<J>): void {
    if (dest.inFlight === 0 && dest.queue.length === 0 && !dest.inRing && dest.breaker.pristine) {
      this.destinations.delete(dest.key);
    }
  }

  private openReason(dest: Destination<J>, now: number): string {
    const b = dest.breaker;
    const when =
      b.state === 'half-open'
        ? 'a probe attempt is under way'
        : `the next probe goes out in ${Math.ceil(Math.max(0, b.openUntil - now) / 1000)} s`;
    return `not sent: the circuit for ${dest.key} is open after repeated failures (no answer, timeouts, 5xx or 429); ${when}`;
  }
}
