import { secretKey, signatureHeader } from '../signing/index.js';
import type { DeliveryRecord } from '../store/index.js';

/** The callback as hookd sends it, for a listener to send on (docs/API.md "Listen"). */
export interface RelayedCallback {
  kind: 'callback';
  DeliveryId: string;
  HookId: string;
  HookName?: string;
  Method: string;
  /** The hook's real callback URL (the CLI sends to its --forward-to instead). */
  Url: string;
  /** In the order hookd sends them, `webhook-id`, `webhook-timestamp`, `webhook-signature` included. */
  Headers: Record<string, string>;
  Body: string | null;
  Trigger: { Method: string; Path: string; StatusCode: number | null };
}

// Set per attempt by the sender, or by the HTTP client (the same as the delivery pipeline's list).
const SKIPPED = new Set([
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'traceparent',
]);

/**
 * Builds the request the way the delivery pipeline builds an attempt: the hook's headers (with
 * `content-type`), `user-agent`, then the Standard Webhooks headers signed now with the hook's
 * current secret, so the receiver verifies it exactly as it would hookd's own attempt.
 */
export function relayedCallback(
  d: DeliveryRecord,
  secret: string,
  opts: { hookName?: string; userAgent?: string; now?: number },
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
  headers['webhook-signature'] = signatureHeader(
    { current: secretKey(secret), previous: undefined, previousValidUntil: 0 },
    d.id,
    timestamp,
    body,
    now,
  );
  return {
    kind: 'callback',
    DeliveryId: d.id,
    HookId: d.hookId,
    ...(opts.hookName !== undefined && { HookName: opts.hookName }),
    Method: d.request.method,
    Url: d.request.url,
    Headers: headers,
    Body: d.request.body ?? null,
    Trigger: { Method: d.trigger.method, Path: d.trigger.path, StatusCode: d.trigger.statusCode ?? null },
  };
}
