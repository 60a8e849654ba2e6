/**
 * Endpoint verification: before a callback origin gets its first delivery, hookd asks
 * it by the CloudEvents handshake whether it wants them, so that whoever can create a hook cannot
 * make hookd post to a third party's URL. The result is cached per origin. Deliveries wait while
 * the handshake has not succeeded (retried every `retryMs`), at most `waitMs` each, then end as
 * failed with the reason. An allowed rate becomes the origin's rate limit.
 */
import { cloudEventsHandshake, type HandshakeResult, type Preflight } from './handshake.js';

export const VERIFICATION_MODES = ['off', 'cloudevents'] as const;
export type VerificationMode = (typeof VERIFICATION_MODES)[number];
export type OriginState = 'verified' | 'unverified';

/** What the verifier needs of a delivery. */
export interface VerifiedItem {
  readonly hookId: string;
  /** The callback URL's origin (the cache key). */
  readonly origin: string;
  readonly endpoint: string;
  heldBy: string | undefined;
  cancelled: boolean;
}

export interface EndpointVerifierOptions<T> {
  /** Sends the handshake through the callback's transport. */
  preflight: Preflight;
  /** `WebHook-Request-Origin`: who is asking (default `hookd`). */
  requestOrigin?: string;
  /** How long a delivery waits for its origin's verification before it fails, ms (default 10 min). */
  waitMs?: number;
  /** Time limit of one handshake, ms (default 10 s). */
  timeoutMs?: number;
  /** Pause between failed handshakes, ms (default 5 s). */
  retryMs?: number;
  /** A waiting delivery may go now. */
  release(item: T): void;
  /** A waiting delivery waited too long: it ends as failed with this reason. */
  fail(item: T, reason: string): void;
}

/** The last handshake with an origin: when, its answer in a few words, when the next one goes. */
export interface HandshakeRecord {
  at: number;
  result: string;
  /** Absent when none is planned (verified, or no delivery waits for the origin). */
  nextAt?: number;
}

interface Entry<T> {
  state: OriginState;
  last?: HandshakeRecord;
  perMinute?: number;
  reason?: string;
  running: boolean;
  url: string;
  waiting: Map<T, number>;
  timer?: NodeJS.Timeout;
}

export class EndpointVerifier<T extends VerifiedItem> {
  private readonly origins = new Map<string, Entry<T>>();
  private readonly waitMs: number;
  private readonly timeoutMs: number;
  private readonly retryMs: number;
  private readonly requestOrigin: string;
  private closed = false;

  constructor(private readonly opts: EndpointVerifierOptions<T>) {
    this.waitMs = opts.waitMs ?? 10 * 60_000;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.retryMs = opts.retryMs ?? 5000;
    this.requestOrigin = opts.requestOrigin ?? 'hookd';
  }

  /**
   * True when the delivery must wait for its origin's verification (it is then kept here). Asked
   * only for deliveries whose plan verifies (`cloudevents`).
   */
  hold(item: T, now: number = Date.now()): boolean {
    let e = this.origins.get(item.origin);
    if (e?.state === 'verified') return false;
    if (e === undefined) {
      e = { state: 'unverified', running: false, url: item.endpoint, waiting: new Map() };
      this.origins.set(item.origin, e);
    }
    if (!e.waiting.has(item)) e.waiting.set(item, now + this.waitMs);
    item.heldBy = `verification of ${item.origin} (CloudEvents handshake)`;
    this.start(item.origin, e);
    return true;
  }

  /** `unverified` while the origin's handshake has not succeeded; undefined when never asked. */
  stateOf(origin: string): OriginState | undefined {
    return this.origins.get(origin)?.state;
  }

  /** The origin's last handshake; undefined before the first has answered. */
  lastHandshake(origin: string): HandshakeRecord | undefined {
    return this.origins.get(origin)?.last;
  }

  /** The origin's allowed rate as a rate limit, if it gave one. */
  rateFor(origin: string): { PerSecond: number; Burst: number } | undefined {
    const m = this.origins.get(origin)?.perMinute;
    return m === undefined ? undefined : { PerSecond: m / 60, Burst: 1 };
  }

  /** A hook's Callback changed: its origin is verified again before its next delivery. */
  forget(origin: string): void {
    const e = this.origins.get(origin);
    if (e !== undefined && e.waiting.size === 0) {
      clearTimeout(e.timer);
      this.origins.delete(origin);
    }
  }

  /** Origins per state (metrics). */
  counts(): Record<OriginState, number> {
    const c = { verified: 0, unverified: 0 };
    for (const e of this.origins.values()) c[e.state]++;
    return c;
  }

  close(): void {
    this.closed = true;
    for (const e of this.origins.values()) clearTimeout(e.timer);
  }

  private start(origin: string, e: Entry<T>): void {
    if (e.running || e.timer !== undefined || this.closed) return;
    e.running = true;
    cloudEventsHandshake(this.opts.preflight, e.url, this.requestOrigin, this.timeoutMs).then(
      (r) => this.settle(origin, e, r),
      (err: Error) => this.settle(origin, e, { ok: false, reason: err.message, result: err.message }),
    );
  }

  private settle(origin: string, e: Entry<T>, r: HandshakeResult): void {
    e.running = false;
    if (this.closed) return;
    const waiting = [...e.waiting];
    e.last = { at: Date.now(), result: r.result };
    if (r.ok) {
      e.state = 'verified';
      if (r.perMinute !== undefined) e.perMinute = r.perMinute;
      e.reason = undefined;
      e.waiting.clear();
      for (const [item] of waiting) {
        item.heldBy = undefined;
        if (!item.cancelled) this.opts.release(item);
      }
      return;
    }
    e.reason = r.reason;
    const now = Date.now();
    for (const [item, deadline] of waiting) {
      if (item.cancelled) e.waiting.delete(item);
      else if (deadline <= now) {
        e.waiting.delete(item);
        item.heldBy = undefined;
        this.opts.fail(
          item,
          `not sent: ${origin} was not verified within ${Math.round(this.waitMs / 1000)} s (${r.reason})`,
        );
      }
    }
    if (e.waiting.size === 0) return;
    e.last.nextAt = now + this.retryMs;
    e.timer = setTimeout(() => {
      e.timer = undefined;
      this.start(origin, e);
    }, this.retryMs);
    e.timer.unref();
  }
}
