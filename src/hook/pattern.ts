/**
 * The PathPattern compiler (SPEC §3). Pure: a pattern string in, segments out.
 *
 * Syntax, decided here where the seed is silent:
 * - `/`-separated segments; one leading `/` is optional and one trailing `/` is ignored.
 * - `*` matches exactly one non-empty segment; `(*)` does the same and captures it (`$1`, `$2`, …).
 * - A final `$` segment anchors the end; without it a pattern matches a prefix of the path.
 * - `/` alone (zero segments) matches every path; `/$` matches only the root.
 * - Literal segments are percent-decoded here, so `a%20b` and `a b` are the same literal and a
 *   literal `*`, `(`, `)` or `$` can be written `%2A`, `%28`, `%29`, `%24`.
 *
 * Messages name the offending segment and the rule; they are written to follow the field name
 * (`PathPattern: segment 3 …`).
 */

export type PatternSegment = { kind: 'literal'; value: string } | { kind: 'wildcard'; capture: boolean };

export interface CompiledPattern {
  /** The pattern exactly as written. */
  source: string;
  /** Literal values are percent-decoded; `$` is not a segment (see `anchored`). */
  segments: PatternSegment[];
  /** True when the pattern ends in `$`: the request path must have no further segments. */
  anchored: boolean;
  /** Number of `(*)` segments, i.e. the highest `$n` a template may use. */
  captureCount: number;
}

export type PatternResult = { ok: true; pattern: CompiledPattern } | { ok: false; message: string };

/** Longest accepted pattern, in UTF-16 code units (a request line longer than this is unusual anyway). */
export const MAX_PATTERN_LENGTH = 2048;
/** Most segments a pattern may have, `$` not counted; bounds the depth of the match index. */
export const MAX_PATTERN_SEGMENTS = 64;

const fail = (message: string): PatternResult => ({ ok: false, message });

const hex4 = (code: number): string => code.toString(16).toUpperCase().padStart(4, '0');

/** Compiles a PathPattern, or explains in one message why it is not one. */
export function compilePattern(source: string): PatternResult {
  if (typeof source !== 'string') return fail('must be a string');
  if (source.length === 0) return fail('must not be empty; use `/` to match every path');
  if (source.length > MAX_PATTERN_LENGTH) {
    return fail(`is ${source.length} characters long; at most ${MAX_PATTERN_LENGTH} are allowed`);
  }
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    // C0, DEL and C1 controls: invisible in logs and tables, and never part of a sane path.
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
      return fail(`contains a control character (U+${hex4(c)}) at position ${i + 1}; remove it`);
    }
    if (c === 0x3f /* ? */) {
      return fail(
        `contains \`?\` at position ${i + 1}: the query string never takes part in matching; ` +
          'remove it (write %3F to match a literal `?` in a segment)',
      );
    }
    if (c === 0x23 /* # */) {
      return fail(
        `contains \`#\` at position ${i + 1}: a fragment is never sent to the server; ` +
          'remove it (write %23 to match a literal `#` in a segment)',
      );
    }
  }

  let body = source.charCodeAt(0) === 0x2f ? source.slice(1) : source;
  if (body.length === 0) {
    return { ok: true, pattern: { source, segments: [], anchored: false, captureCount: 0 } };
  }
  if (body.charCodeAt(body.length - 1) === 0x2f) body = body.slice(0, -1);
  const parts = body.split('/');
  const last = parts.length - 1;
  const anchored = parts[last] === '$';
  const count = anchored ? parts.length - 1 : parts.length;
  if (count > MAX_PATTERN_SEGMENTS) {
    return fail(`has ${count} segments; at most ${MAX_PATTERN_SEGMENTS} are allowed`);
  }

  const segments: PatternSegment[] = [];
  let captureCount = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const n = i + 1;
    if (part === '') {
      return fail(`segment ${n} is empty (\`//\`): empty segments are not allowed; remove the extra \`/\``);
    }
    if (part === '$') {
      if (i === last) continue;
      return fail(`segment ${n} \`$\`: \`$\` anchors the end and must be the last segment`);
    }
    if (part === '*') {
      segments.push({ kind: 'wildcard', capture: false });
      continue;
    }
    if (part === '(*)') {
      segments.push({ kind: 'wildcard', capture: true });
      captureCount++;
      continue;
    }
    if (part.includes('*')) {
      return fail(`segment ${n} \`${part}\`: a wildcard must be a whole segment (\`*\` or \`(*)\`)`);
    }
    if (part.includes('(') || part.includes(')')) {
      return fail(
        `segment ${n} \`${part}\`: only \`(*)\` may be parenthesised; write %28 and %29 for literal parentheses`,
      );
    }
    if (part.includes('$')) {
      return fail(
        `segment ${n} \`${part}\`: \`$\` must be a segment of its own at the end (\`/$\`); write %24 for a literal \`$\``,
      );
    }
    let value = part;
    if (part.includes('%')) {
      try {
        value = decodeURIComponent(part);
      } catch {
        return fail(
          `segment ${n} \`${part}\`: invalid percent-encoding; \`%\` must start a UTF-8 escape such as %20 (write %25 for a literal \`%\`)`,
        );
      }
    }
    segments.push({ kind: 'literal', value });
  }
  return { ok: true, pattern: { source, segments, anchored, captureCount } };
}

/**
 * Percent-decodes one request-path segment. Invalid encodings (`%zz`, broken UTF-8) keep the raw
 * text rather than failing the request: a client may send any bytes, and such a segment can still
 * be matched by `*` or by a literal that spells the same raw text.
 */
export function decodeRequestSegment(raw: string): string {
  if (raw.indexOf('%') === -1) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * Splits a request path (query string ignored) into percent-decoded segments; used by the
 * reference matcher and tests. One leading and one trailing `/` are dropped, so `/` and `` give
 * no segments, `/a/` gives `a`, and `//` and `/a//` keep an empty segment (`''` and `a`, `''`).
 */
export function splitRequestPath(path: string): string[] {
  const { start, end } = pathBounds(path);
  if (start >= end) return [];
  return path
    .slice(start, path.charCodeAt(end - 1) === 0x2f ? end - 1 : end)
    .split('/')
    .map(decodeRequestSegment);
}

/** The first segment of a request path, percent-decoded as `splitRequestPath` does; undefined when it has none. */
export function firstRequestSegment(path: string): string | undefined {
  const { start, end } = pathBounds(path);
  if (start >= end) return undefined;
  const slash = path.indexOf('/', start);
  return decodeRequestSegment(path.slice(start, slash === -1 || slash > end ? end : slash));
}

/** Where a request path's segments start (after one leading `/`) and end (before `?` or `#`). */
function pathBounds(path: string): { start: number; end: number } {
  let end = path.length;
  const q = path.indexOf('?');
  if (q !== -1) end = q;
  const h = path.indexOf('#');
  if (h !== -1 && h < end) end = h;
  return { start: end > 0 && path.charCodeAt(0) === 0x2f ? 1 : 0, end };
}
