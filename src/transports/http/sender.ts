/**
 * Sends one attempt of a callback with undici over keep-alive connections of the pinned
 * dispatcher (SPEC §10: resolve, check every address, pin). Success is a 2xx; a 3xx is a failure
 * and never followed. At most 4 KiB of the response body is kept for the log; the rest is read
 * and dropped (up to a limit, so a connection can be reused) and never buffered.
 *
 * Uses undici's dispatch handler API rather than `request()`: no response stream, no parsed
 * header object and no AbortSignal per attempt (PERF-NOTES "Sending callbacks": per-callback
 * garbage is what made `fetch` eleven times dearer than `request`).
 */
import type { Dispatcher } from 'undici';
import { CallbackTargetDeniedError } from './pinned-dispatcher.js';
import { closedAtHandshake } from './tls-refusal.js';

/** The first this many bytes of a response body are kept for the delivery log. */
export const RESPONSE_LOG_BYTES = 4096;
// A body longer than this is not read to its end: the connection is dropped instead.
const DISCARD_LIMIT = 64 * 1024;

export interface AttemptResult {
  /** Null when there was no response. */
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  /** The first 4 KiB of the response body as UTF-8; null without a response. */
  responseBody: string | null;
  /** The `Retry-After` header as sent, only read for 429 and 503. */
  retryAfter: string | undefined;
  /** True when the target policy refused the address: nothing was sent. */
  denied: boolean;
  /** True when `abortAll` ended the attempt (shutdown): its outcome is unknown. */
  aborted: boolean;
  /**
   * True when the host could not be reached at all (refused, DNS, TLS, connect time-out): a
   * failure of the host, for its circuit breaker, rather than of the endpoint.
   */
  unreachable?: boolean;
  /** True when the connection closed during or right after the TLS handshake (tls-refusal.ts). */
  closedAtHandshake?: boolean;
}

export interface SendRequest {
  origin: string;
  path: string;
  method: Dispatcher.HttpMethod;
  /** Flat `[name, value, …]` list. */
  headers: string[];
  body: string | undefined;
  /** Ends the attempt as `aborted` (shutdown). */
  signal?: AbortSignal;
}

class AttemptTimeout extends Error {
  readonly code = 'ATTEMPT_TIMEOUT';
  constructor(ms: number) {
    super(`no complete response within ${ms} ms`);
  }
}

class ShutdownAbort extends Error {
  readonly code = 'SHUTDOWN';
  constructor() {
    super('aborted: hookd is shutting down');
  }
}

/** One attempt in flight: the undici handler and the settle-once logic. */
class Attempt implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  private statusCode: number | null = null;
  private retryAfter: string | undefined = undefined;
  private chunks: Buffer[] | undefined = undefined;
  private kept = 0;
  private read = 0;
  private readonly timer: NodeJS.Timeout;
  readonly started = performance.now();

  constructor(
    private readonly owner: Sender,
    private readonly resolve: (r: AttemptResult) => void,
    private readonly timeoutMs: number,
    /** An https origin: a close at the handshake may be a client-certificate refusal. */
    private readonly tls: boolean,
  ) {
    this.timer = setTimeout(this.onTimeout, timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(new ShutdownAbort());
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // 1xx informational answers come first on some servers; the final status replaces them.
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    if (statusCode === 429 || statusCode === 503) {
      const ra = headers['retry-after'];
      this.retryAfter = Array.isArray(ra) ? ra[0] : ra;
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.read += chunk.length;
    if (this.kept < RESPONSE_LOG_BYTES) {
      const part =
        chunk.length <= RESPONSE_LOG_BYTES - this.kept
          ? chunk
          : chunk.subarray(0, RESPONSE_LOG_BYTES - this.kept);
      this.kept += part.length;
      if (this.chunks === undefined) this.chunks = [part];
      else this.chunks.push(part);
    }
    if (this.read > DISCARD_LIMIT) {
      // Enough is known; a huge body is not worth reading to keep one connection.
      this.finish(null);
      controller.abort(new Error('response body too large; connection dropped'));
    }
  }

  onResponseEnd(): void {
    this.finish(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    this.finish(err);
  }

  /** Ends the attempt at shutdown: its outcome is unknown and it stays pending. */
  abort(): void {
    if (this.settled) return;
    this.finish(new ShutdownAbort());
    this.controller?.abort(new ShutdownAbort());
  }

  private readonly onTimeout = (): void => {
    if (this.settled) return;
    const err = new AttemptTimeout(this.timeoutMs);
    // Before a connection exists there is nothing to abort yet; the connect timeout ends it.
    this.finish(err);
    this.controller?.abort(err);
  };

  private finish(err: Error | null): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.owner.inFlight.delete(this);
    const latencyMs = Math.round((performance.now() - this.started) * 100) / 100;
    let body: string | null = null;
    if (this.chunks !== undefined) {
      body =
        this.chunks.length === 1
          ? this.chunks[0]!.toString('utf8')
          : Buffer.concat(this.chunks).toString('utf8');
      this.chunks = undefined;
    } else if (this.statusCode !== null) {
      body = '';
    }
    this.resolve({
      statusCode: this.statusCode,
      error: err === null ? null : describeError(err),
      latencyMs,
      responseBody: body,
      retryAfter: this.retryAfter,
      denied: denialOf(err) !== undefined,
      // A response whose body broke off still has its status: the receiver answered.
      aborted: err instanceof ShutdownAbort && this.statusCode === null,
      unreachable: this.statusCode === null && isUnreachable(err),
      ...(this.statusCode === null && this.tls && closedAtHandshake(err) && { closedAtHandshake: true }),
    });
  }
}

// Errors that say the host could not be reached, before any endpoint was asked anything.
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET_TLS',
  'EPROTO',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  // The egress proxy refused the tunnel (src/egress/): the host's breaker, not every endpoint's.
  'HOOKD_PROXY_REFUSED',
]);

/** Whether an attempt's error is a connection-level failure (see `AttemptResult.unreachable`). */
export function isUnreachable(err: Error | null): boolean {
  if (err === null || denialOf(err) !== undefined) return false;
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 3; depth++) {
    const code = (e as { code?: unknown }).code;
    if (
      typeof code === 'string' &&
      (UNREACHABLE.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_'))
    )
      return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

function denialOf(err: Error | null): CallbackTargetDeniedError | undefined {
  if (err === null) return undefined;
  if (err instanceof CallbackTargetDeniedError) return err;
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof CallbackTargetDeniedError ? cause : undefined;
}

/** An error as the delivery log shows it: the message, with the system code when there is one. */
export function describeError(err: Error): string {
  const denied = denialOf(err);
  if (denied) return denied.message;
  const code = (err as { code?: unknown }).code;
  if (err instanceof AttemptTimeout || err instanceof ShutdownAbort) return err.message;
  if (typeof code === 'string' && code !== '' && !err.message.includes(code))
    return `${code}: ${err.message}`;
  return err.message || String(code ?? err.name);
}

/** Sends attempts through one dispatcher (the pinned agent in the daemon). */
export class Sender {
  /** @internal attempts in flight, for `abortAll`. */
  readonly inFlight = new Set<Attempt>();

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly timeoutMs: number,
  ) {}

  /** Sends one attempt; never rejects: every outcome is an `AttemptResult`. */
  send(req: SendRequest): Promise<AttemptResult> {
    return new Promise<AttemptResult>((resolve) => {
      const signal = req.signal;
      const onAbort = () => attempt.abort();
      const settle =
        signal === undefined
          ? resolve
          : (r: AttemptResult) => {
              signal.removeEventListener('abort', onAbort);
              resolve(r);
            };
      const attempt = new Attempt(this, settle, this.timeoutMs, req.origin.startsWith('https:'));
      this.inFlight.add(attempt);
      if (signal?.aborted) {
        attempt.abort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        this.dispatcher.dispatch(
          {
            origin: req.origin,
            path: req.path,
            method: req.method,
            headers: req.headers,
            body: req.body ?? null,
            // Our own timer bounds the whole attempt; these only stop undici from waiting longer.
            headersTimeout: this.timeoutMs,
            bodyTimeout: this.timeoutMs,
          },
          attempt,
        );
      } catch (err) {
        attempt.onResponseError(undefined, err as Error);
      }
    });
  }

  /** Ends every attempt in flight; their results say `aborted`. */
  abortAll(): void {
    for (const a of [...this.inFlight]) a.abort();
  }
}
