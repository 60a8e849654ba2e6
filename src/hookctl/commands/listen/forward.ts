/**
 * Sends a relayed callback to the developer's local receiver (`--forward-to`), as hookd would
 * have sent it to the hook's endpoint: same method, headers and body. hookd never connects to
 * this URL; hookctl does, from the developer's machine, so the callback-target policy is not
 * involved.
 */
import type { RelayedCallback } from '../../../wire/index.js';

export type { RelayedCallback };

export interface ForwardResult {
  StatusCode: number | null;
  LatencyMs: number;
  Error: string | null;
  ResponseBody: string | null;
}

const HOP_BY_HOP = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
]);
const RESPONSE_LIMIT = 4096;

export async function forward(cb: RelayedCallback, to: string, timeoutMs = 30_000): Promise<ForwardResult> {
  const { request } = await import('undici');
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(cb.Headers ?? {})) if (!HOP_BY_HOP.has(k.toLowerCase())) headers[k] = v;
  const started = performance.now();
  try {
    const res = await request(to, {
      method: cb.Method as 'POST',
      headers,
      ...(cb.Body !== null && cb.Method !== 'GET' && cb.Method !== 'DELETE' && { body: cb.Body }),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const text = await res.body.text();
    return {
      StatusCode: res.statusCode,
      LatencyMs: Math.round((performance.now() - started) * 10) / 10,
      Error: null,
      ResponseBody: text.slice(0, RESPONSE_LIMIT),
    };
  } catch (e) {
    const err = e as { code?: string; message?: string; cause?: { code?: string } };
    return {
      StatusCode: null,
      LatencyMs: Math.round((performance.now() - started) * 10) / 10,
      Error: `${err.cause?.code ?? err.code ?? 'error'}: ${err.message ?? String(e)}`.slice(0, 500),
      ResponseBody: null,
    };
  }
}

/** `localhost:3000/webhook` (as stripe listen takes it) → `http://localhost:3000/webhook`. */
export function forwardUrl(text: string): URL | undefined {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  if (!URL.canParse(withScheme)) return undefined;
  const url = new URL(withScheme);
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) return undefined;
  return url;
}
