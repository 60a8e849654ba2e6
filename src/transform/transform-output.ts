/**
 * What a transform returned, checked: `payload` (a string, or any JSON value sent as JSON),
 * `headers` (merged over the hook's; none of hookd's own) and `skip`.
 */
import { HOOKD_SET_HEADERS } from '../signing/index.js';

/** Headers a transform cannot set: the signature's, the framing's, the loop mark and the bearer token. */
export const RESERVED_TRANSFORM_HEADERS: ReadonlySet<string> = new Set([
  ...HOOKD_SET_HEADERS,
  'cdn-loop',
  'authorization',
  'user-agent',
  'traceparent',
]);

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_TEXT = /^[\t\x20-\x7e\x80-\xff]*$/;

export type TransformOutcome =
  | { skip: true }
  | { skip: false; payload?: string; headers: Record<string, string> }
  | { error: string };

export function readOutput(json: string): TransformOutcome {
  const out = JSON.parse(json) as unknown;
  if (out === null) return { skip: false, headers: {} };
  if (typeof out !== 'object' || Array.isArray(out))
    return { error: 'transform must return an object ({payload, headers, skip}) or nothing' };
  const o = out as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (k !== 'payload' && k !== 'headers' && k !== 'skip')
      return { error: `transform returned "${k.slice(0, 40)}", which is not payload, headers or skip` };
  if (o.skip !== undefined && typeof o.skip !== 'boolean') return { error: 'skip must be true or false' };
  if (o.skip === true) return { skip: true };
  const headers: Record<string, string> = {};
  if (o.headers !== undefined) {
    if (o.headers === null || typeof o.headers !== 'object' || Array.isArray(o.headers))
      return { error: 'headers must be an object of header names to strings' };
    for (const [name, value] of Object.entries(o.headers as Record<string, unknown>)) {
      if (!HEADER_NAME.test(name))
        return { error: `header name "${name.slice(0, 60)}" is not a valid token` };
      if (RESERVED_TRANSFORM_HEADERS.has(name.toLowerCase()))
        return { error: `header "${name.toLowerCase()}" is set by hookd and cannot be set by a transform` };
      const v = typeof value === 'number' || typeof value === 'boolean' ? String(value) : value;
      if (typeof v !== 'string') return { error: `header "${name}" must be a string` };
      if (!HEADER_TEXT.test(v))
        return { error: `header "${name}" must not contain CR, LF or other controls` };
      headers[name] = v;
    }
  }
  if (o.payload === undefined) return { skip: false, headers };
  const payload = typeof o.payload === 'string' ? o.payload : JSON.stringify(o.payload);
  return { skip: false, payload, headers };
}
