/**
 * A per-destination circuit breaker: after `threshold` consecutive failures (no answer, a timeout,
 * 5xx, 429) the destination is skipped for a cool-down; then one probe attempt goes through, and
 * its outcome closes the circuit or opens it again with a longer cool-down.
 */

export interface BreakerOptions {
  /** Consecutive failures that open the circuit (default 5). */
  threshold: number;
  /** First cool-down before a probe, ms (default 30 s); doubles after each failed probe. */
  cooldownMs: number;
  /** Longest cool-down, ms (default 5 min). */
  maxCooldownMs: number;
  /**
   * Told when a circuit opens (it was closed) or closes again (it was open or half-open): the
   * seam that operational notifications (`endpoint.breaker_opened`/`_closed`) and logs hang on,
   * whatever the breakers are keyed by. Re-opening after a failed probe is not a transition.
   */
  onTransition?: BreakerListener;
}

/** `key`: what the breaker guards (the destination); `probeAt`: when an opened one lets a probe through. */
export type BreakerListener = (key: string, transition: 'opened' | 'closed', probeAt: number) => void;

export const DEFAULT_BREAKER: BreakerOptions = Object.freeze({
  threshold: 5,
  cooldownMs: 30_000,
  maxCooldownMs: 300_000,
});

/**
 * What an attempt taught about its destination: it answered (`ok`, whatever the status apart
 * from the failures below), it failed (`fail`), or nothing (`none`: refused by the target policy,
 * aborted at shutdown).
 */
export type DestinationOutcome = 'ok' | 'fail' | 'none';

/** What `allow` decided: go ahead, go ahead as the half-open probe, or skip. */
export type Permit = 'go' | 'probe' | 'skip';

export class CircuitBreaker {
  state: 'closed' | 'open' | 'half-open' = 'closed';
  /** Consecutive failures while closed. */
  failures = 0;
  /** When an open circuit lets its probe through. */
  openUntil = 0;
  private cooldown: number;

  constructor(
    private readonly opts: BreakerOptions,
    /** What it guards, for `onTransition`. */
    readonly key = '',
  ) {
    this.cooldown = opts.cooldownMs;
  }

  /** True when nothing learned is left: the breaker can be dropped with its destination. */
  get pristine(): boolean {
    return this.state === 'closed' && this.failures === 0;
  }

  /** Whether an attempt may start now; the first one after the cool-down is the probe. */
  allow(now: number): Permit {
    if (this.state === 'closed') return 'go';
    if (this.state === 'open' && now >= this.openUntil) {
      this.state = 'half-open';
      return 'probe';
    }
    return 'skip';
  }

  /** True while attempts are being skipped (open and cooling down, or a probe under way). */
  blocking(now: number): boolean {
    return this.state === 'half-open' || (this.state === 'open' && now < this.openUntil);
  }

  /**
   * Records an outcome; returns true when this outcome opened the circuit. Outcomes of attempts
   * that started before the circuit opened do not count against it, but any answer closes it.
   */
  record(outcome: DestinationOutcome, probe: boolean, now: number): boolean {
    if (outcome === 'ok') {
      const wasOpen = this.state !== 'closed';
      this.state = 'closed';
      this.failures = 0;
      this.cooldown = this.opts.cooldownMs;
      if (wasOpen) this.opts.onTransition?.(this.key, 'closed', now);
      return false;
    }
    if (outcome === 'none') {
      // Nothing learned: a probe that told nothing lets the next attempt probe instead.
      if (probe && this.state === 'half-open') {
        this.state = 'open';
        this.openUntil = now;
      }
      return false;
    }
    if (this.state === 'closed') {
      this.failures++;
      if (this.failures < this.opts.threshold) return false;
      this.open(now);
      this.opts.onTransition?.(this.key, 'opened', this.openUntil);
      return true;
    }
    if (probe && this.state === 'half-open') {
      this.cooldown = Math.min(this.cooldown * 2, this.opts.maxCooldownMs);
      this.open(now);
      return true;
    }
    return false;
  }

  /** An open circuit lets its probe through now rather than after its cool-down. */
  probeNow(now: number): void {
    if (this.state === 'open') this.openUntil = Math.min(this.openUntil, now);
  }

  private open(now: number): void {
    this.state = 'open';
    this.openUntil = now + this.cooldown;
  }
}
