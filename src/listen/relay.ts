import { SET_BY_SENDER } from '../delivery/index.js';
import { receiverSignatures, type SignatureScheme, secretKey, signatureFor } from '../signing/index.js';
import type { DeliveryRecord } from '../store/index.js';
import { withoutPassword } from '../util/index.js';
import type { RelayedCallback } from '../wire/index.js';

export type { RelayedCallback };

// What an attempt's sender sets (src/delivery/), and `traceparent`, which an attempt sets itself
// when tracing is on: a relayed callback carries none.
const SKIPPED: ReadonlySet<string> = new Set([...SET_BY_SENDER, 'traceparent']);

/**
 * Builds the request the way the delivery pipeline builds an attempt: the hook's headers (with
 * `content-type`), `user-agent`, then the Standard Webhooks headers signed now with the hook's
 * current secret, so the receiver verifies it exactly as it would hookd's own attempt.
 */
export function relayedCallback(
  d: DeliveryRecord,
  secret: string,
  opts: {
    hookName?: string;
    userAgent?: string;
    now?: number;
    /** The hook's `Signature.Schemes` (undefined: `v1`). */
    schemes?: readonly SignatureScheme[];
  },
): RelayedCallback {
  const now = opts.now ?? Date.now();
  const headers: Record<string, string> = {};
  let ua = false;
  for (const name in d.request.headers) {
    const lower = name.toLowerCase();
    if (SKIPPED.has(lower)) continue;
    if (lower === 'user-agent') ua = true;
    headers[name] = d.request.headers[name]!;
  }
  if (!ua) headers['user-agent'] = opts.userAgent ?? 'hookd';
  const timestamp = String(Math.floor(now / 1000));
  const body = d.request.body ?? '';
  headers['webhook-id'] = d.id;
  headers['webhook-timestamp'] = timestamp;
  const keys = { current: secretKey(secret), previous: undefined, previousValidUntil: 0 };
  const signature = signatureFor(opts.schemes, keys, d.id, timestamp, body, now);
  if (signature !== '') headers['webhook-signature'] = signature;
  // The receiver's own formats (`github`, templates), as an attempt sends them.
  const extra = receiverSignatures(opts.schemes, keys, d.id, timestamp, body) ?? [];
  for (let i = 0; i < extra.length; i += 2) headers[extra[i]!] = extra[i + 1]!;
  return {
    kind: 'callback',
    DeliveryId: d.id,
    HookId: d.hookId,
    ...(opts.hookName !== undefined && { HookName: opts.hookName }),
    Method: d.request.method,
    Url: withoutPassword(d.request.url),
    Headers: headers,
    Body: d.request.body ?? null,
    Trigger: {
      Kind: 'request',
      Method: d.trigger.method,
      Path: d.trigger.path,
      StatusCode: d.trigger.statusCode ?? null,
    },
  };
}
