/**
 * The headers of a callback request, built once per delivery with named places for the values
 * each attempt sets, so that no part depends on another's array positions. undici
 * copies the list when dispatching, so one list serves every attempt of a delivery.
 */

/**
 * Headers a callback's sender sets itself (Standard Webhooks, framing) or that would break the
 * request (undici refuses hop-by-hop ones): a hook's own values for them are never sent. Shared
 * with the listen relay (src/listen/), which must build the same request as an attempt.
 */
export const SET_BY_SENDER: ReadonlySet<string> = new Set([
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
]);

// Plus the loop mark, set per attempt (src/loops/).
const RESERVED_HEADERS = new Set([...SET_BY_SENDER, 'hookd-loop']);

export interface CallbackHeaders {
  /** `[name, value, …]` as undici takes them. */
  readonly list: string[];
  /** Where the per-attempt values go in `list`; `traceparent` is -1 with tracing off. */
  readonly at: { readonly traceparent: number; readonly timestamp: number; readonly signature: number };
}

/** `[…hook headers, user-agent, webhook-id, webhook-timestamp, _, webhook-signature, _]`. */
export function callbackHeaders(
  d: { id: string; request: { headers: Record<string, string> } },
  userAgent: string,
  traced: boolean,
): CallbackHeaders {
  // With tracing on, `traceparent` comes first and is set per attempt, not by the hook.
  const list: string[] = traced ? ['traceparent', ''] : [];
  let ua = false;
  for (const name in d.request.headers) {
    const lower = name.toLowerCase();
    // Without tracing, a hook's `traceparent` is kept only as its first header: a receiver reads one.
    if (RESERVED_HEADERS.has(lower) || (list.length > 0 && lower === 'traceparent')) continue;
    if (lower === 'user-agent') ua = true;
    list.push(name, d.request.headers[name]!);
  }
  if (!ua) list.push('user-agent', userAgent);
  list.push('webhook-id', d.id, 'webhook-timestamp', '');
  const timestamp = list.length - 1;
  list.push('webhook-signature', '');
  return { list, at: { traceparent: traced ? 1 : -1, timestamp, signature: list.length - 1 } };
}

/**
 * Sets one attempt's values; returns the list to send. `webhook-signature` and the receivers' own
 * signature headers (`extra`, `[name, value, …]`) end the list, so it is cut back to them and
 * refilled when either is asked for; an empty `signature` leaves `webhook-signature` out.
 */
export function stampAttempt(
  h: CallbackHeaders,
  v: {
    timestamp: string;
    signature: string;
    traceparent: string | undefined;
    extra?: readonly string[] | undefined;
  },
): string[] {
  h.list[h.at.timestamp] = v.timestamp;
  const named = h.at.signature - 1;
  if (v.extra === undefined && v.signature !== '' && h.list.length === named + 2) {
    h.list[h.at.signature] = v.signature;
  } else {
    h.list.length = named;
    if (v.signature !== '') h.list.push('webhook-signature', v.signature);
    if (v.extra !== undefined) h.list.push(...v.extra);
  }
  if (v.traceparent !== undefined && h.at.traceparent >= 0) h.list[h.at.traceparent] = v.traceparent;
  return h.list;
}
