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
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return textOf(
      (headers as { get(name: string): unknown }).get(lower) ??
        (headers as { get(n: string): unknown }).get(name),
    );
  }
  const record = headers as Readonly<Record<string, unknown>>;
  if (Object.hasOwn(record, lower)) return textOf(record[lower]);
  for (const key of Object.keys(record)) if (key.toLowerCase() === lower) return textOf(record[key]);
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
