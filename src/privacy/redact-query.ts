/**
 * `--redact-query-params`: query parameters whose values are credentials (an `api_key` in a link)
 * are replaced by `REDACTED` in `$REQUEST_URI`, and so in stored deliveries and the tail, before
 * any hook owner sees them. Names compare case-insensitively and percent-decoded; everything else
 * of the URI is kept byte for byte.
 */
export const DEFAULT_REDACTED_QUERY_PARAMS: readonly string[] = Object.freeze([
  'access_token',
  'api_key',
  'apikey',
  'token',
  'password',
  'secret',
  'sig',
  'signature',
  'key',
]);

export const REDACTED = 'REDACTED';

/** A function redacting those parameters, or undefined when the list is empty (nothing to do). */
export function queryRedactor(names: readonly string[]): ((uri: string) => string) | undefined {
  if (names.length === 0) return undefined;
  const wanted = new Set(names.map((n) => n.toLowerCase()));
  return (uri) => {
    const q = uri.indexOf('?');
    if (q === -1) return uri;
    const h = uri.indexOf('#', q);
    const end = h === -1 ? uri.length : h;
    const parts = uri.slice(q + 1, end).split('&');
    let changed = false;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      const eq = part.indexOf('=');
      const rawName = eq === -1 ? part : part.slice(0, eq);
      if (!wanted.has(decodeName(rawName).toLowerCase())) continue;
      // A bare `?token` carries no value, but is marked too: it may be the credential itself.
      parts[i] = `${rawName}=${REDACTED}`;
      changed = true;
    }
    return changed ? `${uri.slice(0, q + 1)}${parts.join('&')}${uri.slice(end)}` : uri;
  };
}

function decodeName(raw: string): string {
  const plus = raw.includes('+') ? raw.replaceAll('+', ' ') : raw;
  if (!plus.includes('%')) return plus;
  try {
    return decodeURIComponent(plus);
  } catch {
    return plus;
  }
}
