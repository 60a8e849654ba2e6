/**
 * The header shapes a callback arrives with, read one way: an HTTP request's headers, AMQP
 * message headers, MQTT 5 user properties, NATS headers, a Redis stream entry's fields, or
 * anything with `get(name)` (fetch's Headers, NATS's MsgHdrs, a Map). Names are case-insensitive.
 */
export type HeaderValue = string | string[] | Uint8Array | number | null | undefined;
export type CallbackHeaders =
  | Readonly<Record<string, HeaderValue | readonly string[]>>
  | { get(name: string): unknown };

/** The value of `name` as text (the first of a repeated header), or undefined. */
export function headerOf(headers: CallbackHeaders, name: string): string | undefined {
  const lower = name.toLowerCase();
  if (typeof (headers as { get?: unknown }).get === 'function') return viaGet(headers as Getter, name, lower);
  const record = headers as Readonly<Record<string, unknown>>;
  if (Object.hasOwn(record, lower)) return textOf(record[lower]);
  for (const key of Object.keys(record)) if (key.toLowerCase() === lower) return textOf(record[key]);
  return undefined;
}

interface Getter {
  get(name: string): unknown;
  keys?: () => Iterable<string>;
}

/**
 * Through `get`: fetch's Headers ignores case, NATS's MsgHdrs matches the name exactly and
 * answers '' for a missing one, so the name is tried as given, lower-cased, then as each key.
 */
function viaGet(h: Getter, name: string, lower: string): string | undefined {
  const direct = textOf(h.get(name)) || textOf(h.get(lower));
  if (direct) return direct;
  if (typeof h.keys !== 'function') return undefined;
  for (const k of h.keys()) {
    if (k.toLowerCase() !== lower) continue;
    const v = textOf(h.get(k));
    if (v) return v;
  }
  return undefined;
}

function textOf(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8');
  if (Array.isArray(v)) return v.length === 0 ? undefined : textOf(v[0]);
  return undefined;
}
