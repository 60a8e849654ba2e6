import type { SendOutcome } from '../transport.js';

/** An outcome before its latency is known. */
export type Verdict = Omit<SendOutcome, 'latencyMs'>;

/**
 * Why a broker connection could not be used, in words fit for the delivery log (never with a
 * password). `denied`: the address policy refused the host, nothing was sent. `unreachable`: no
 * connection (refused, DNS, TLS, time-out, lost). `refused`: the broker answered and said no
 * (wrong credentials, an unknown vhost or database): retrying the same URL cannot help.
 * `closed`: the transport is shutting down.
 */
export class LinkFailure extends Error {
  override readonly name = 'LinkFailure';
  constructor(
    readonly kind: 'denied' | 'unreachable' | 'refused' | 'closed',
    message: string,
    /** While a reconnect is scheduled: how long until it runs. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** The outcome of an attempt that could not get a connection: nothing was sent. */
export function failureVerdict(err: unknown): Verdict {
  if (!(err instanceof LinkFailure)) {
    return { kind: 'retry', text: `not sent: ${err instanceof Error ? err.message : String(err)}` };
  }
  // As for HTTP: the retry policy decides whether to try again.
  switch (err.kind) {
    case 'denied':
      return { kind: 'refused', denied: true, text: err.message };
    case 'refused':
      return { kind: 'refused', text: err.message };
    case 'closed':
      return { kind: 'retry', aborted: true, text: err.message };
    case 'unreachable':
      return err.retryAfterMs === undefined
        ? { kind: 'retry', unreachable: true, text: err.message }
        : { kind: 'retry', unreachable: true, text: err.message, retryAfterMs: err.retryAfterMs };
  }
}
