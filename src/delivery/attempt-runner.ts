/**
 * Sends one attempt of a delivery: the signing keys, the attempt's headers (callback-headers.ts),
 * the trace span, the request, and the result handed back to the pipeline. Counts the attempts in
 * flight, so that shutdown can wait for them or abort them. Moved out of pipeline.ts (issue 27).
 */
import type { Logger } from 'pino';
import type { Agent } from 'undici';
import type { AddressChecker, LookupAll } from '../policy/index.js';
import { receiverSignatures, signatureFor } from '../signing/index.js';
import type { Tracing } from '../tracing/index.js';
import { internalFailure, verdictOf } from './attempt-result.js';
import { callbackHeaders, stampAttempt } from './callback-headers.js';
import type { Delivery } from './delivery.js';
import type { AttemptVerdict } from './fairness.js';
import type { HookSecrets } from './hook-secrets.js';
import type { DeliveryLimits } from './limits.js';
import { createPinnedDispatcher } from './pinned-dispatcher.js';
import type { DeliveryPipelineOptions } from './pipeline-options.js';
import { type AttemptResult, Sender } from './sender.js';

/** What the runner asks of the pipeline. */
export interface AttemptHost {
  readonly logger: Logger;
  /** False once shutdown began: no new send starts. */
  sending(): boolean;
  isActive(hookId: string): boolean;
  /** Applies a result: state, retry or end, log record, event. */
  complete(d: Delivery, start: number, r: AttemptResult): void;
  /** Ends a delivery that will not be sent; not an attempt. */
  endUnsent(d: Delivery, reason: string): void;
  /** The limiter's slot is free again (with what the attempt said about the destination). */
  done(d: Delivery, verdict: AttemptVerdict, probe: number): void;
}

export interface RunnerOptions {
  /** The callback target policy, applied at connect time to every resolved address. */
  policy: AddressChecker;
  limits: DeliveryLimits;
  lookup: LookupAll | undefined;
  secrets: HookSecrets;
  tracing: Tracing | undefined;
  /** Sent as `User-Agent` unless the hook sets its own. */
  userAgent: string;
  /** Marks each attempt as hookd's own (src/loops/, issue 22). */
  loopMark?: DeliveryPipelineOptions['loopMark'];
  /** Issue 24 (src/signing/): a hook's signature schemes. */
  schemesFor?: DeliveryPipelineOptions['schemesFor'];
  /** Issue 24 (src/egress/): callbacks leave through the egress proxy. */
  tunnel?: DeliveryPipelineOptions['tunnel'];
}

export class AttemptRunner {
  private inFlight = 0;
  private second = -1;
  private secondText = '';
  private onIdle: (() => void) | undefined;

  /** The connection pool to the receivers (verification handshakes use it too). */
  readonly dispatcher: Agent;
  private readonly sender: Sender;
  private readonly secrets: HookSecrets;
  private readonly tracing: Tracing | undefined;
  private readonly userAgent: string;
  private readonly loopMark: DeliveryPipelineOptions['loopMark'];
  private readonly schemesFor: DeliveryPipelineOptions['schemesFor'];

  constructor(
    private readonly host: AttemptHost,
    o: RunnerOptions,
  ) {
    this.dispatcher = createPinnedDispatcher(o.policy, {
      // No more connections per origin than attempts may be in flight there: undici never queues.
      connections: o.limits.perHost,
      connectTimeout: Math.min(o.limits.connectTimeoutMs, o.limits.timeoutMs),
      ...(o.lookup && { lookup: o.lookup }),
      ...(o.tunnel && { tunnel: o.tunnel }),
    });
    this.sender = new Sender(this.dispatcher, o.limits.timeoutMs);
    this.secrets = o.secrets;
    this.tracing = o.tracing;
    this.userAgent = o.userAgent;
    this.loopMark = o.loopMark;
    this.schemesFor = o.schemesFor;
  }

  /** Closes the connections to the receivers (after close). */
  destroy(): Promise<void> {
    return this.dispatcher.destroy();
  }

  /** Attempts in flight. */
  get running(): number {
    return this.inFlight;
  }

  readonly run = (d: Delivery, probe: number): void => {
    this.inFlight++;
    void this.attempt(d, probe);
  };

  /** Aborts the requests in flight (they end as aborted and stay pending). */
  abortAll(): void {
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
    this.host.logger.warn(
      { inFlight: this.inFlight },
      'attempts still in flight at shutdown were aborted; they stay pending',
    );
    this.sender.abortAll();
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

  private async attempt(d: Delivery, probe: number): Promise<void> {
    const host = this.host;
    let outcome: AttemptVerdict = 'none';
    d.heldBy = undefined;
    try {
      if (d.cancelled) return;
      if (!host.isActive(d.hookId)) {
        host.endUnsent(d, 'not sent: the hook is disabled or was deleted');
        return;
      }
      const keys = this.secrets.cached(d.hookId) ?? (await this.secrets.keysFor(d.hookId, d.persist));
      // Shutdown began while the secret was loading: leave it pending rather than start a send.
      if (!host.sending()) return;
      const start = Date.now();
      const timestamp = this.timestampOf(start);
      d.headers ??= callbackHeaders(d, this.userAgent, this.tracing !== undefined);
      const span = this.tracing?.attempt(d, d.attempts + 1);
      const headers = stampAttempt(d.headers, {
        timestamp,
        // Issue 24: v1 and/or v1a per hook (src/signing/).
        signature: signatureFor(
          this.schemesFor?.(d.hookId),
          keys,
          d.id,
          timestamp,
          d.request.body ?? '',
          start,
        ),
        // The receivers' own formats (`github`, templates), in headers of their own.
        extra: receiverSignatures(this.schemesFor?.(d.hookId), keys, d.id, timestamp, d.request.body ?? ''),
        traceparent: span?.traceparent,
      });
      // Issue 22 (src/loops/): hookd's own requests carry a signed mark and a CDN-Loop entry.
      this.loopMark?.(
        headers,
        d.trigger.method === 'NOTIFY' ? 'notification' : 'callback',
        d.request.method,
        d.path,
      );
      const result = await this.sender.send({
        origin: d.origin,
        path: d.path,
        method: d.request.method,
        headers,
        body: d.request.body,
      });
      span?.end(result.statusCode, result.error, d.rateWaitMs);
      d.active = false;
      // Aborted at shutdown: the outcome is unknown, so it stays pending and goes again after restart.
      if (result.aborted || d.cancelled) return;
      outcome = verdictOf(result);
      host.complete(d, start, result);
    } catch (err) {
      // Only our own failures end up here (a store that cannot give a secret): retry later.
      d.active = false;
      host.logger.error({ err, deliveryId: d.id, hookId: d.hookId }, 'delivery attempt failed inside hookd');
      if (!d.cancelled) host.complete(d, Date.now(), internalFailure(err as Error));
    } finally {
      d.active = false;
      host.done(d, outcome, probe);
      if (--this.inFlight === 0 && this.onIdle) {
        const resolve = this.onIdle;
        this.onIdle = undefined;
        resolve();
      }
    }
  }
}
