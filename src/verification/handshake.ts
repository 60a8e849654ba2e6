/**
 * The CloudEvents HTTP webhook validation handshake (CloudEvents "HTTP 1.1 Web Hooks for Event
 * Delivery" §4.2): an `OPTIONS` request to the callback URL carrying `WebHook-Request-Origin`; the
 * receiver agrees by answering 2xx with `WebHook-Allowed-Origin` naming that origin (or `*`), and
 * may limit us with `WebHook-Allowed-Rate` (requests per minute, or `*`). Sent through the
 * pipeline's dispatcher: the callback target policy and the egress proxy apply to it as to
 * callbacks.
 */
import { type Dispatcher, request } from 'undici';

export type HandshakeResult = { ok: true; perMinute?: number } | { ok: false; reason: string };

export async function cloudEventsHandshake(
  dispatcher: Dispatcher,
  url: string,
  requestOrigin: string,
  timeoutMs: number,
): Promise<HandshakeResult> {
  try {
    const res = await request(url, {
      method: 'OPTIONS',
      dispatcher,
      headers: { 'webhook-request-origin': requestOrigin, 'webhook-request-rate': '120' },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body.dump().catch(() => undefined);
    const allowed = header(res.headers, 'webhook-allowed-origin');
    if (res.statusCode < 200 || res.statusCode > 299) {
      return {
        ok: false,
        reason: `the endpoint answered the validation request (OPTIONS) with ${res.statusCode}`,
      };
    }
    if (allowed === undefined || (allowed !== '*' && allowed.toLowerCase() !== requestOrigin.toLowerCase())) {
      return {
        ok: false,
        reason: `the endpoint's answer to the validation request did not allow origin ${requestOrigin} (WebHook-Allowed-Origin: ${allowed ?? 'absent'})`,
      };
    }
    const rate = header(res.headers, 'webhook-allowed-rate');
    const perMinute = rate !== undefined && /^\d+$/.test(rate.trim()) ? Number(rate.trim()) : undefined;
    return perMinute !== undefined && perMinute > 0 ? { ok: true, perMinute } : { ok: true };
  } catch (err) {
    const e = err as Error & { code?: string };
    const what =
      e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT'
        ? `no answer within ${timeoutMs} ms`
        : e.message;
    return { ok: false, reason: `the validation request (OPTIONS) failed: ${what}` };
  }
}

function header(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}
