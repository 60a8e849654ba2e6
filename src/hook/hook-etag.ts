/**
 * A hook's version for conditional requests (RFC 9110 §8.8.3): its `Modified` value in quotes.
 * `Modified` changes on every replace (strictly later, see HookService), so the ETag does too,
 * and whoever holds the JSON of a hook (`hookctl get ID > hook.json`) knows the version it read
 * without having kept the header. The API and hookctl both take it from here.
 */
export function etagOf(hook: { Modified?: unknown }): string | undefined {
  return typeof hook.Modified === 'string' && /^[\x21\x23-\x7e]+$/.test(hook.Modified)
    ? `"${hook.Modified}"`
    : undefined;
}
