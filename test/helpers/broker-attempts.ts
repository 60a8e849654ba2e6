/**
 * What the broker transport tests share: a context with a real address policy that allows
 * loopback, attempts signed the Standard Webhooks way, and a skip when a broker is missing.
 */
import { connect } from 'node:net';
import { AddressPolicy } from '../../src/policy/index.js';
import { newSigningSecret, secretKey, signatureHeader } from '../../src/signing/index.js';
import type { TransportAttempt, TransportContext } from '../../src/transports/index.js';

export interface Recorded {
  readonly ctx: TransportContext;
  readonly reconnects: string[];
  readonly logs: string[];
}

/** A context as the daemon makes it, recording reconnects and log lines. */
export function recordingContext(over: Partial<TransportContext> = {}): Recorded {
  const reconnects: string[] = [];
  const logs: string[] = [];
  const ctx: TransportContext = {
    policy: new AddressPolicy(['127.0.0.0/8']),
    lookup: undefined,
    timeoutMs: 5000,
    connectTimeoutMs: 2000,
    perReceiver: 8,
    log: (level, msg, fields) => logs.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`),
    onReconnect: (key) => reconnects.push(key),
    ...over,
  };
  return { ctx, reconnects, logs };
}

export const SECRET = newSigningSecret();

let seq = 0;

/** An attempt with the Standard Webhooks headers, signed with {@link SECRET}, and `extra` headers. */
export function signedAttempt(url: string, body: string, extra: string[] = []): TransportAttempt {
  const id = `msg_test${process.pid}x${++seq}`;
  const sentAt = Date.now();
  const ts = String(Math.floor(sentAt / 1000));
  const keys = { current: secretKey(SECRET), previous: undefined, previousValidUntil: 0 };
  return {
    id,
    url,
    method: 'POST',
    headers: [
      'webhook-id',
      id,
      'webhook-timestamp',
      ts,
      'webhook-signature',
      signatureHeader(keys, id, ts, body, sentAt),
      ...extra,
    ],
    body,
    contentType: 'application/json',
    sentAt,
  };
}

/** A name no other test run uses: `prefix-pid-time-n`. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${++seq}`;
}

/**
 * Undefined when the broker answers on 127.0.0.1:`port`; otherwise the reason to skip, unless
 * HOOKD_REQUIRE_ALL=1 makes a missing broker a failure.
 */
export async function brokerMissing(name: string, port: number): Promise<string | undefined> {
  const up = await new Promise<boolean>((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
  if (up) return undefined;
  if (process.env.HOOKD_REQUIRE_ALL === '1') throw new Error(`${name} is not answering on 127.0.0.1:${port}`);
  return `${name} is not answering on 127.0.0.1:${port}`;
}
