/**
 * The headers and bodies of a reported (or dry-run) request and its response, for the hooks
 * whose Filter or Transform reads them: `Headers`, `Body`, `ResponseHeaders`, `ResponseBody`.
 */
import type { Trigger } from '../engine/index.js';
import type { FieldError } from '../errors/index.js';
import { type BodyCopy, type FilterValue, filterHeaders } from '../filter/index.js';

export const CONTENT_FIELDS = ['Headers', 'Body', 'ResponseHeaders', 'ResponseBody'] as const;

export interface ServedContent {
  Headers?: Record<string, string>;
  Body?: unknown;
  ResponseHeaders?: Record<string, string>;
  ResponseBody?: unknown;
}

/** Field errors of the content fields of one served request. */
export function contentErrors(o: Record<string, unknown>, f: (name: string) => string): FieldError[] {
  const errors: FieldError[] = [];
  for (const name of ['Headers', 'ResponseHeaders'] as const) {
    const v = o[name];
    if (v === undefined) continue;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      errors.push({ field: f(name), message: 'must be an object of header names to string values' });
      continue;
    }
    for (const [k, x] of Object.entries(v as Record<string, unknown>))
      if (typeof x !== 'string')
        errors.push({ field: f(`${name}.${k.slice(0, 60)}`), message: 'must be a string' });
  }
  if (o.ResponseBody !== undefined && o.StatusCode === undefined)
    errors.push({ field: f('StatusCode'), message: 'is required with ResponseBody' });
  return errors;
}

/** The trigger's view of the content: headers as a filter sees them, bodies up to `limit` bytes. */
export function contentOf(
  s: ServedContent,
  limit: number,
  hidden: readonly string[],
): Pick<Trigger, 'headers' | 'requestBody'> & { response: NonNullable<Trigger['response']> } {
  const headers = filterHeaders(flat(s.Headers), hidden);
  const responseHeaders = filterHeaders(flat(s.ResponseHeaders));
  const out: Pick<Trigger, 'headers' | 'requestBody'> & { response: NonNullable<Trigger['response']> } = {
    headers: () => headers,
    response: { headers: () => responseHeaders },
  };
  const body = copyOf(s.Body, headers['content-type'], limit);
  if (body !== undefined) out.requestBody = body;
  const rb = copyOf(s.ResponseBody, responseHeaders['content-type'], limit);
  if (rb !== undefined) out.response.body = rb;
  return out;
}

function flat(h: Record<string, string> | undefined): string[] {
  return h === undefined ? [] : Object.entries(h).flat();
}

/**
 * A JSON value is the body itself; a string is parsed as JSON when the content type says JSON,
 * else it is the text. Over the limit (as JSON text, or the string's bytes): no body, truncated.
 */
function copyOf(body: unknown, contentType: string | undefined, limit: number): BodyCopy | undefined {
  if (body === undefined || body === null) return undefined;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > limit) return { bytes: Buffer.alloc(0), truncated: true };
  if (typeof body !== 'string') return { bytes, truncated: false, value: body as FilterValue };
  if (contentType !== undefined && /^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType)) {
    try {
      return { bytes, truncated: false, value: JSON.parse(text) as FilterValue };
    } catch {
      // Said JSON, is not: the text, as the proxy would see it.
    }
  }
  return { bytes, truncated: false, value: text };
}
