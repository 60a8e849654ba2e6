/**
 * Sends one attempt of a delivery: the signing keys, the attempt's headers (callback-headers.ts),
 * the trace span, the send through the transport of the Callback's scheme, and the outcome
 * applied (completion.ts); the attempt's verdict on its destination is what it resolves to. Counts
 * the attempts in flight, so that shutdown can wait for them or abort them.
 */
import type { Logger } from 'pino';
import type { ReceiverPace } from '../pace/index.js';
import { receiverSignatures, signatureFor } from '../signing/index.js';
import type { Tracing } from '../tracing/index.js';
import type { AttemptSender, SendOutcome, TransportAttempt } from '../transports/index.js';
import { internalFailure, paceSampleOf, recordedAttempt, verdictOf } from './attempt-result.js';
import { type CallbackHeaders, callbackHeaders, stampAttempt } from './callback-headers.js';
import type { Completion } from './completion.js';
import type { Delivery } from './delivery.js';
import type { AttemptVerdict } from './fairness.js';
import type { HookSecrets } from './hook-secrets.js';
import type { SendContext } from './pipeline-options.js';
import type { DeliveryPlans } from './plan/index.js';
import type { RateWaits } from './rate-limit.js';

export interface RunnerOptions {
  readonly logger: Logger;
  /** Applies an outcome, or ends a delivery unsent. */
  completion: Pick<Completion, 'complete' | 'endUnsent'>;
  /** The pipeline's lifecycle: once it aborts no new send starts. */
  signal: AbortSignal;
  /** Sends by the Callback's scheme: this loop's own transports, or the delivery threads. */
  sender: AttemptSender;
  secrets: HookSecrets;
  tracing: Tracing | undefined;
  /** Sent as `User-Agent` unless the hook sets its own. */
  userAgent: string;
  /** Marks each attempt as hookd's own (src/loops/). */
  loopMark?: SendContext['loopMark'];
  /** Each delivery's plan as its subject is now: looked up again as the attempt starts. */
  plans: DeliveryPlans;
  /** Learns each receiver's pace from its answers (src/pace/). */
  pace?: ReceiverPace;
  auth?: SendContext['auth'];
  /** The rate limits' wait before each attempt, for its span. */
  rateWaits: Pick<RateWaits, 'of'>;
}

export class AttemptRunner {
  private inFlight = 0;
  private second = -1;
  private secondText = '';
  private onIdle: (() => void) | undefined;
  /** Aborted once the drain time is over: every send still in flight ends `aborted`. */
  readonly #cut = new AbortController();

  private readonly logger: Logger;
  private readonly completion: RunnerOptions['completion'];
  private readonly signal: AbortSignal;
  private readonly sender: AttemptSender;
  private readonly secrets: HookSecrets;
  private readonly tracing: Tracing | undefined;
  private readonly userAgent: string;
  private readonly loopMark: SendContext['loopMark'];
  private readonly plans: DeliveryPlans;
  private readonly pace: ReceiverPace | undefined;
  private readonly auth: SendContext['auth'];
  private readonly rateWaits: Pick<RateWaits, 'of'>;
  /**
   * Each delivery's request headers with room for the per-attempt signing headers, built at its
   * first attempt and reused by its retries; weakly held, so an ended delivery takes them along.
   */
  private readonly headersOf = new WeakMap<Delivery, CallbackHeaders>();

  constructor(o: RunnerOptions) {
    this.logger = o.logger;
    this.completion = o.completion;
    this.signal = o.signal;
    this.sender = o.sender;
    this.secrets = o.secrets;
    this.tracing = o.tracing;
    this.userAgent = o.userAgent;
    this.loopMark = o.loopMark;
    this.plans = o.plans;
    this.pace = o.pace;
    this.rateWaits = o.rateWaits;
    this.auth = o.auth;
  }

  /** Closes the connections to the receivers (after close). */
  async destroy(): Promise<void> {
    await Promise.all([this.sender.close(), this.auth?.close()]);
  }

  /** Attempts in flight. */
  get running(): number {
    return this.inFlight;
  }

  /** Sends one attempt; resolves to what it said about its destination, for the limiter. */
  readonly run = (d: Delivery): Promise<AttemptVerdict> => {
    this.inFlight++;
    return this.attempt(d);
  };

  /** Aborts the requests in flight (they end as aborted and stay pending). */
  abortAll(): void {
    this.#cut.abort();
    this.sender.abortAll();
  }

  /**
   * Gives the attempts in flight up to `drainMs` to finish, then aborts the rest (they stay
   * pending and go again after a restart).
   */
  async drain(drainMs: number): Promise<void> {
    if (this.inFlight === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.idle(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, drainMs);
      }),
    ]);
    clearTimeout(timer);
    if (this.inFlight === 0) return;
    this.logger.warn(
      { inFlight: this.inFlight },
      'attempts still in flight at shutdown were aborted; they stay pending',
    );
    this.abortAll();
    await this.idle();
  }

  /** Resolves once no attempt is in flight. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const previous = this.onIdle;
      this.onIdle = () => {
        previous?.();
        resolve();
      };
    });
  }

  /** `webhook-timestamp` (unix seconds) as text, made once per second rather than per attempt. */
  private timestampOf(ms: number): string {
    const second = Math.floor(ms / 1000);
    if (second !== this.second) {
      this.second = second;
      this.secondText = String(second);
    }
    return this.secondText;
  }

  private async attempt(d: Delivery): Promise<AttemptVerdict> {
    const done = this.completion;
    let outcome: AttemptVerdict = 'none';
    d.heldBy = undefined;
    try {
      if (d.cancelled) return outcome;
      const plan = this.plans.planOf(d.hookId);
      d.plan = plan;
      if (!plan.active) {
        done.endUnsent(d, 'not sent: the hook is disabled or was deleted');
        return outcome;
      }
      const keys = this.secrets.cached(d.hookId) ?? (await this.secrets.keysFor(d.hookId, d.persist));
      // Shutdown began while the secret was loading: leave it pending rather than start a send.
      if (this.signal.aborted) return outcome;
      const start = Date.now();
      const timestamp = this.timestampOf(start);
      let base = this.headersOf.get(d);
      if (base === undefined) {
        base = callbackHeaders(d, this.userAgent, this.tracing !== undefined);
        this.headersOf.set(d, base);
      }
      const span = this.tracing?.attempt(d, d.attempts + 1);
      const schemes = plan.schemes;
      const headers = stampAttempt(base, {
        timestamp,
        // v1 and/or v1a per hook (src/signing/).
        signature: signatureFor(schemes, keys, d.id, timestamp, d.request.body ?? '', start),
        // The receivers' own formats (`github`, templates), in headers of their own.
        extra: receiverSignatures(schemes, keys, d.id, timestamp, d.request.body ?? ''),
        traceparent: span?.traceparent,
      });
      // hookd's own requests carry a signed mark and a CDN-Loop entry (src/loops/).
      this.loopMark?.(headers, d.source, d.request.method, d.path);
      const load = this.pace?.sent(d.origin);
      // A hook with OAuth2 credentials sends a bearer token, renewed once on a 401 (src/oauth2/).
      const result =
        this.auth && plan.oauth2
          ? await this.auth.send(plan.oauth2, (extra) => this.send(d, [...headers, ...extra], start))
          : await this.send(d, headers, start);
      if (load !== undefined) this.pace?.answered(d.origin, paceSampleOf(result, load));
      if (span !== undefined) {
        const r = recordedAttempt(result);
        span.end(r.statusCode, r.error, this.rateWaits.of(d));
      }
      d.active = false;
      // Aborted at shutdown: the outcome is unknown, so it stays pending and goes again after restart.
      if (result.aborted || d.cancelled) return outcome;
      outcome = verdictOf(result);
      done.complete(d, start, result);
    } catch (err) {
      // Only our own failures end up here (a store that cannot give a secret): retry later.
      d.active = false;
      this.logger.error({ err, deliveryId: d.id, hookId: d.hookId }, 'delivery attempt failed inside hookd');
      if (!d.cancelled) done.complete(d, Date.now(), internalFailure(err as Error));
    } finally {
      d.active = false;
      if (--this.inFlight === 0 && this.onIdle) {
        const resolve = this.onIdle;
        this.onIdle = undefined;
        resolve();
      }
    }
    return outcome;
  }

  /** Hands the attempt to the transport of its Callback's scheme. */
  private send(d: Delivery, headers: string[], start: number): Promise<SendOutcome> {
    const tls = d.plan.tls;
    const attempt: TransportAttempt = {
      id: d.id,
      url: d.request.url,
      method: d.request.method,
      headers,
      body: d.request.body,
      contentType: d.contentType,
      sentAt: start,
      signal: this.#cut.signal,
      ...(tls !== undefined && { tls }),
    };
    return this.sender.send(d.protocol, attempt);
  }
}
