/**
 * The CloudEvents HTTP webhook validation handshake (CloudEvents "HTTP 1.1 Web Hooks for Event
 * Delivery" §4.2): an `OPTIONS` request to the callback URL carrying `WebHook-Request-Origin`; the
 * receiver agrees by answering 2xx with `WebHook-Allowed-Origin` naming that origin (or `*`), and
 * may limit us with `WebHook-Allowed-Rate` (requests per minute, or `*`). Sent as a preflight of
 * the callback's transport, on its connections: the callback target policy and the egress proxy
 * apply to it as to callbacks.
 */
import { STATUS_CODES } from 'node:http';
import type { PreflightAnswer, PreflightRequest } from '../transports/index.js';

/** Sends a preflight through the transport of the Callback's scheme. */
export type Preflight = (request: PreflightRequest) => Promise<PreflightAnswer>;

/**
 * `result`: the answer in a few words for the hook's `VerificationResult` ("403 Forbidden", "200
 * without WebHook-Allowed-Origin", "no answer within 10 s"); `reason`: a sentence for a failed
 * delivery's error.
 */
export type HandshakeResult =
  | { ok: true; perMinute?: number; result: string }
  | { ok: false; reason: string; result: string };

/** `10 s` for whole seconds, else `500 ms`. */
function duration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** A receiver's header value in a message: printable, short. */
function shown(v: string): string {
  return JSON.stringify(v.slice(0, 100));
}

export async function cloudEventsHandshake(
  preflight: Preflight,
  url: string,
  requestOrigin: string,
  timeoutMs: number,
): Promise<HandshakeResult> {
  try {
    const answer = await preflight({
      url,
      method: 'OPTIONS',
      headers: { 'webhook-request-origin': requestOrigin, 'webhook-request-rate': '120' },
      timeoutMs,
    });
    const res = { statusCode: answer.code, headers: answer.headers };
    const allowed = header(res.headers, 'webhook-allowed-origin');
    const status = `${res.statusCode} ${STATUS_CODES[res.statusCode] ?? ''}`.trim();
    if (res.statusCode < 200 || res.statusCode > 299) {
      return {
        ok: false,
        reason: `the endpoint answered the validation request (OPTIONS) with ${res.statusCode}`,
        result: status,
      };
    }
    if (allowed === undefined || (allowed !== '*' && allowed.toLowerCase() !== requestOrigin.toLowerCase())) {
      return {
        ok: false,
        reason: `the endpoint's answer to the validation request did not allow origin ${requestOrigin} (WebHook-Allowed-Origin: ${allowed ?? 'absent'})`,
        result:
          allowed === undefined
            ? `${res.statusCode} without WebHook-Allowed-Origin`
            : `${res.statusCode} with WebHook-Allowed-Origin ${shown(allowed)}, not ${requestOrigin}`,
      };
    }
    const rate = header(res.headers, 'webhook-allowed-rate');
    const perMinute = rate !== undefined && /^\d+$/.test(rate.trim()) ? Number(rate.trim()) : undefined;
    return perMinute !== undefined && perMinute > 0
      ? { ok: true, perMinute, result: `${status}, ${perMinute} a minute allowed` }
      : { ok: true, result: status };
  } catch (err) {
    const e = err as Error & { code?: string };
    const timedOut = e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT';
    const what = timedOut ? `no answer within ${timeoutMs} ms` : e.message;
    return {
      ok: false,
      reason: `the validation request (OPTIONS) failed: ${what}`,
      result: timedOut ? `no answer within ${duration(timeoutMs)}` : `not sent: ${e.code ?? e.message}`,
    };
  }
}

function header(
  h: Readonly<Record<string, string | string[] | undefined>>,
  name: string,
): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}
