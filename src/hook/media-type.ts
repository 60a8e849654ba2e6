/**
 * Media types for `CallbackContentMediaType` (SPEC §2, §5): parsed strictly by the RFC 9110
 * grammar because the value goes out verbatim as the callback's `Content-Type` header, and
 * classified into the kind that decides how template variables are escaped.
 */

/** How template variables are escaped for a media type. */
export type MediaKind = 'json' | 'xml' | 'form' | 'text';

/** A parsed media type. `type`, `subtype`, `essence` and parameter names are lower-case. */
export interface MediaType {
  type: string;
  subtype: string;
  /** Parameter values as written, quoted strings unquoted; the first of repeated names wins. */
  params: Record<string, string>;
  /** `type/subtype`, lower-case. */
  essence: string;
}

/** Longer values are refused: nobody needs them and they only bloat every callback. */
export const MAX_MEDIA_TYPE_LENGTH = 255;

// RFC 9110 §5.6.2 tchar.
const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]$/;
const isTchar = (c: string | undefined): boolean => c !== undefined && TCHAR.test(c);
const isOws = (c: string | undefined): boolean => c === ' ' || c === '\t';
// qdtext and the quoted-pair payload without obs-text (0x80–0xFF): a non-ASCII header value
// is encoded differently by different clients, so it is refused rather than sent garbled.
const isQdtext = (code: number): boolean =>
  code === 0x09 ||
  code === 0x20 ||
  code === 0x21 ||
  (code >= 0x23 && code <= 0x5b) ||
  (code >= 0x5d && code <= 0x7e);
const isQuotedPairChar = (code: number): boolean => code === 0x09 || (code >= 0x20 && code <= 0x7e);

/**
 * Parses `type "/" subtype *( OWS ";" OWS [ name "=" ( token / quoted-string ) ] )` (RFC 9110
 * §8.3.1, §5.6.6; empty parameters such as a trailing `;` are allowed as the RFC allows them).
 * Returns null for anything else, including surrounding whitespace, CR/LF/NUL, non-ASCII and
 * values over 255 characters.
 */
export function parseMediaType(value: string): MediaType | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_MEDIA_TYPE_LENGTH) return null;
  let i = 0;
  const token = (): string | null => {
    const start = i;
    while (isTchar(value[i])) i++;
    return i > start ? value.slice(start, i) : null;
  };

  const type = token();
  if (type === null || value[i] !== '/') return null;
  i++;
  const subtype = token();
  if (subtype === null) return null;

  const params = new Map<string, string>();
  while (i < value.length) {
    while (isOws(value[i])) i++;
    if (value[i] !== ';') return null;
    i++;
    while (isOws(value[i])) i++;
    if (i === value.length || value[i] === ';') continue; // empty parameter
    const rawName = token();
    if (rawName === null || value[i] !== '=') return null;
    i++;
    let paramValue: string | null;
    if (value[i] === '"') {
      i++;
      let v = '';
      paramValue = null;
      while (i < value.length) {
        const c = value.charCodeAt(i);
        if (c === 0x22) {
          i++;
          paramValue = v;
          break;
        }
        if (c === 0x5c) {
          const next = value.charCodeAt(i + 1);
          if (!isQuotedPairChar(next)) return null;
          v += value[i + 1];
          i += 2;
          continue;
        }
        if (!isQdtext(c)) return null;
        v += value[i];
        i++;
      }
      if (paramValue === null) return null; // unterminated quoted-string
    } else {
      paramValue = token();
      if (paramValue === null) return null;
    }
    // Parameter names are case-insensitive (RFC 9110 §5.6.6); the first occurrence wins, as in
    // the WHATWG MIME parser, so that every reader agrees on e.g. the charset.
    const name = rawName.toLowerCase();
    if (!params.has(name)) params.set(name, paramValue);
  }

  const t = type.toLowerCase();
  const s = subtype.toLowerCase();
  // Object.fromEntries defines own properties, so a parameter called `__proto__` is just data.
  return { type: t, subtype: s, params: Object.fromEntries(params), essence: `${t}/${s}` };
}

/**
 * The escaping kind of a media type: `json` for `application/json` and any `+json` suffix,
 * `xml` for `application/xml`, `text/xml` and any `+xml` suffix, `form` for
 * `application/x-www-form-urlencoded`, `text` for everything else.
 */
export function mediaKind(mt: MediaType): MediaKind {
  const essence = mt.essence.toLowerCase();
  const subtype = mt.subtype.toLowerCase();
  if (essence === 'application/json' || subtype.endsWith('+json')) return 'json';
  if (essence === 'application/xml' || essence === 'text/xml' || subtype.endsWith('+xml')) return 'xml';
  if (essence === 'application/x-www-form-urlencoded') return 'form';
  return 'text';
}
