import { suggest } from '../../util/index.js';

/**
 * Writes each character of `value` that `special` matches as `%XX` (its UTF-8 bytes, upper-case
 * hex), so that a captured value cannot add a separator or wildcard to a broker name, and a
 * consumer gets the value back with `decodeURIComponent`. `%` itself must be in `special`.
 * The result is then URL-encoded for its place in the Callback URL.
 */
export function escapeForBroker(value: string, special: RegExp): string {
  const inName = value.replace(special, (ch) =>
    [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
  return encodeURIComponent(inName);
}

/**
 * The query keys of a Callback URL that are not `known`, or a repeated one, as a message naming
 * the key and the closest known key (the caller puts it under the field `Callback`); undefined
 * when they are all known.
 */
export function checkQueryKeys(url: URL, known: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const key of url.searchParams.keys()) {
    if (!known.includes(key)) {
      const near = suggest(key, known);
      return (
        `the ${url.protocol} URL has an unknown query parameter "${key}"` +
        `${near ? `; did you mean "${near}"?` : ''} (known: ${known.join(', ')})`
      );
    }
    if (seen.has(key)) return `the ${url.protocol} URL gives the query parameter "${key}" twice`;
    seen.add(key);
  }
  return undefined;
}
