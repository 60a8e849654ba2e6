/**
 * One receiver's concurrency limit, learned from its answers: additive increase while answers
 * come back fast and well, multiplicative decrease when the latency rises above the receiver's
 * own baseline or it says it is overloaded (429, 503, no answer in time). docs/DECISIONS.md
 * says why AIMD with a latency signal rather than a pure gradient.
 */

/** What one answer says about the receiver's load. */
export interface PaceSample {
  /** Time from send to the end of the answer, ms. */
  readonly latencyMs: number;
  /** Attempts to this receiver in flight when this one was sent, itself included. */
  readonly inFlight: number;
  /**
   * `ok`: a good answer; `overload`: 429, 503 or no answer in time; `other`: an answer that says
   * nothing about load (a 4xx, a 500, a refused connection): the limit stays as it is.
   */
  readonly verdict: 'ok' | 'overload' | 'other';
  /** With `overload`: the receiver's own code (429, 503), so a lowered limit can say what it answered. */
  readonly answerCode?: number;
  /** With `overload`: no answer came in time. */
  readonly timedOut?: boolean;
}

/**
 * Why a limit is below its maximum: still climbing from its start at a quarter of it (not a
 * warning), or cut by what the receiver did, in words (`429 Too Many Requests`, `answers above
 * 2× its 12 ms baseline`, `time-outs`).
 */
export type PaceNote = { readonly state: 'ramping' } | { readonly state: 'lowered'; readonly after: string };

export interface AdaptiveOptions {
  /** The limit's ceiling (`--delivery-per-endpoint`). */
  readonly max: number;
  /** Latency above this many times the baseline is "slow" (default 2). */
  readonly tolerance?: number;
  /** …and above the baseline by at least this many ms, so loopback jitter is not load (default 5). */
  readonly slackMs?: number;
  /** The factor a slow answer shrinks the limit by (default 0.9); an overload halves it. */
  readonly backoff?: number;
}

/** How fast the smoothed latency follows new answers. */
const SMOOTHING = 0.3;
/** How fast an answer without load lifts the baseline, so it follows a receiver that got slower for good. */
const BASELINE_LIFT = 0.1;

export class AdaptiveLimit {
  private value: number;
  /** Until the first sign of load the limit doubles per round trip (as TCP's slow start), then grows by one. */
  private slowStart = true;
  private baseline = Number.POSITIVE_INFINITY;
  private smoothed = 0;
  /** Answers still to come from attempts sent before the last decrease: they do not decrease it again. */
  private settling = 0;
  private readonly tolerance: number;
  private readonly slackMs: number;
  private readonly backoff: number;
  /** What the last decrease was for; undefined until the receiver first showed load. */
  private lastCut: string | undefined;

  constructor(private readonly opts: AdaptiveOptions) {
    // It starts low so that the first answers show the receiver's latency without load: the
    // baseline everything later is measured against.
    this.value = Math.max(1, Math.ceil(opts.max / 4));
    this.tolerance = opts.tolerance ?? 2;
    this.slackMs = opts.slackMs ?? 5;
    this.backoff = opts.backoff ?? 0.9;
  }

  /** The whole number of attempts allowed in flight now, 1 to max. */
  get limit(): number {
    return Math.max(1, Math.min(this.opts.max, Math.floor(this.value)));
  }

  /** The latency the receiver shows without load, ms (undefined before its first answer). */
  get baselineMs(): number | undefined {
    return Number.isFinite(this.baseline) ? this.baseline : undefined;
  }

  /** Why the limit is below the maximum now; undefined at the maximum. */
  get note(): PaceNote | undefined {
    if (this.limit >= this.opts.max) return undefined;
    return this.lastCut === undefined ? { state: 'ramping' } : { state: 'lowered', after: this.lastCut };
  }

  observe(s: PaceSample): void {
    if (s.verdict === 'other') return;
    if (this.settling > 0) this.settling--;
    if (s.verdict === 'overload') {
      this.decrease(0.5, overloadCause(s));
      return;
    }
    const ms = Math.max(0, s.latencyMs);
    // The baseline is the lowest latency seen; only an answer to a lone attempt (no load by
    // definition) may lift it, so a receiver held at its knee does not raise its own baseline.
    if (s.inFlight <= 1 && ms > this.baseline) this.baseline += BASELINE_LIFT * (ms - this.baseline);
    else this.baseline = Math.min(ms, this.baseline);
    this.smoothed = this.smoothed === 0 ? ms : this.smoothed + SMOOTHING * (ms - this.smoothed);
    const bound = Math.max(this.baseline * this.tolerance, this.baseline + this.slackMs);
    if (this.smoothed > bound) this.decrease(this.backoff, this.slowCause());
    // Grows only while the limit is used: an idle receiver's limit says nothing about its pace.
    else if (s.inFlight >= this.limit - 1)
      this.value = Math.min(this.opts.max, this.value + (this.slowStart ? 1 : 1 / this.limit));
  }

  /** Shrinks once per round trip: the answers to attempts sent under the old limit are its effect. */
  private decrease(factor: number, cause: string): void {
    if (this.settling > 0) return;
    this.slowStart = false;
    this.lastCut = cause;
    this.value = Math.max(1, this.value * factor);
    this.settling = Math.ceil(this.value / factor);
  }

  /** The bound a slow answer crossed, as docs/decisions/0072 words it: the larger of the two. */
  private slowCause(): string {
    // A loopback receiver's baseline is below a millisecond: one decimal keeps it from reading 0.
    const base = this.baseline < 10 ? this.baseline.toFixed(1) : String(Math.round(this.baseline));
    return this.baseline * this.tolerance >= this.baseline + this.slackMs
      ? `answers above ${this.tolerance}× its ${base} ms baseline`
      : `answers more than ${this.slackMs} ms above its ${base} ms baseline`;
  }
}

const REASONS: Readonly<Record<number, string>> = { 429: 'Too Many Requests', 503: 'Service Unavailable' };

/** An overload answer in words; one without its code says what overload may be. */
function overloadCause(s: PaceSample): string {
  if (s.timedOut === true) return 'time-outs';
  if (s.answerCode !== undefined)
    return `${s.answerCode}${REASONS[s.answerCode] ? ` ${REASONS[s.answerCode]}` : ''}`;
  return 'overload answers (429, 503 or no answer in time)';
}
