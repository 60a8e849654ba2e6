/** The request's headers and query as a filter sees them. */
import { HIDDEN_HEADERS } from './variables.js';

/**
 * Lower-case names, repeated values joined with `, `; credentials and the names in `hidden`
 * (the identity header) left out. `raw` is a flat name/value list (Node's `rawHeaders`).
 */
export function filterHeaders(
  raw: readonly string[],
  hidden: readonly string[] = [],
): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HIDDEN_HEADERS.includes(name) || hidden.includes(name)) continue;
    const v = raw[i + 1]!;
    out[name] = name in out ? `${out[name]}, ${v}` : v;
  }
  return { ...out };
}

/**
 * `query` (name to first value) and `queryAll` (name to every value) of a request target; the
 * parameters `--redact-query-params` names are left out.
 */
export function filterQuery(
  url: string,
  redacted: readonly string[] = [],
): { query: Record<string, string>; queryAll: Record<string, string[]> } {
  const q = url.indexOf('?');
  const query: Record<string, string> = {};
  const queryAll: Record<string, string[]> = {};
  if (q === -1) return { query, queryAll };
  const lowerRedacted = redacted.map((r) => r.toLowerCase());
  for (const [name, value] of new URLSearchParams(url.slice(q + 1))) {
    if (lowerRedacted.includes(name.toLowerCase())) continue;
    // Own data properties only: a parameter named __proto__ is a key like any other.
    if (Object.hasOwn(queryAll, name)) queryAll[name]!.push(value);
    else {
      Object.defineProperty(queryAll, name, {
        value: [value],
        enumerable: true,
        writable: true,
        configurable: true,
      });
      Object.defineProperty(query, name, { value, enumerable: true, writable: true, configurable: true });
    }
  }
  return { query, queryAll };
}
