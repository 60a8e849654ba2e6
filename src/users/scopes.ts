/**
 * Scopes: what a user's hooks may observe (docs/DECISIONS.md "Scopes"). Pure: strings
 * in, verdicts out; no store, no HTTP.
 *
 * A user's `Scopes` is a list whose entries are either
 * - a path pattern in PathPattern syntax (prefix semantics, `*` one segment, a final `$` anchors):
 *   "requests under this path", matched exactly as a hook's PathPattern is matched; or
 * - the word `own`: "requests made by this user" (needs an identity of the proxied request).
 *
 * A hook fires for a request only if it matches and the request is inside one of its owner's
 * scopes; a hook may only be created with a PathPattern that some path scope covers, unless its
 * owner has `own` (it then fires for the owner's own requests anywhere).
 */
import { type CompiledPattern, compilePattern, splitRequestPath } from '../hook/index.js';

/** The entry meaning "requests made by this user". */
export const OWN = 'own';
/** What a new user gets unless the admin grants more. */
export const DEFAULT_SCOPES: readonly string[] = Object.freeze([OWN]);
/** The admin's scopes: every request. */
export const ADMIN_SCOPES: readonly string[] = Object.freeze(['/']);
export const MAX_SCOPES = 64;
/** The user made at first start, with every scope. */
export const ADMIN_USER = 'admin';

/** What a user gets when nobody says otherwise. */
export function defaultScopesFor(name: string): readonly string[] {
  return name === ADMIN_USER ? ADMIN_SCOPES : DEFAULT_SCOPES;
}

export const SCOPE_RULE =
  'a hook fires only for requests inside one of its owner\'s scopes, so its PathPattern must lie inside one of the owner\'s path scopes (or the owner needs the scope "own")';

/** A user's scopes, compiled once. */
export interface CompiledScopes {
  /** The entries as stored. */
  readonly entries: readonly string[];
  readonly paths: readonly CompiledPattern[];
  readonly own: boolean;
  /** A path scope `/` (or any other that holds every path): no per-request test needed. */
  readonly everything: boolean;
}

export type ScopesResult = { ok: true; scopes: string[] } | { ok: false; errors: string[] };

/**
 * Checks a list of scope entries as given by a client or a JWT claim: each `own` or a valid
 * PathPattern; duplicates dropped, order kept. Messages name the entry.
 */
export function parseScopes(input: unknown): ScopesResult {
  if (!Array.isArray(input)) return { ok: false, errors: ['must be a list of path patterns or "own"'] };
  if (input.length > MAX_SCOPES)
    return { ok: false, errors: [`has ${input.length} entries; at most ${MAX_SCOPES}`] };
  const errors: string[] = [];
  const out: string[] = [];
  input.forEach((e, i) => {
    if (typeof e !== 'string') {
      errors.push(`[${i}] must be a string: a path pattern such as /repositories/acme or the word "own"`);
      return;
    }
    if (e !== OWN) {
      if (!e.startsWith('/')) {
        errors.push(
          `[${i}] "${e.slice(0, 80)}" is neither the word "own" nor a path pattern starting with /`,
        );
        return;
      }
      const p = compilePattern(e);
      if (!p.ok) {
        errors.push(`[${i}] "${e.slice(0, 80)}" is neither "own" nor a path pattern: it ${p.message}`);
        return;
      }
    }
    if (!out.includes(e)) out.push(e);
  });
  return errors.length ? { ok: false, errors } : { ok: true, scopes: out };
}

/** Compiles valid entries (stored ones); an entry that no longer compiles is ignored (fails closed). */
export function compileScopes(entries: readonly string[]): CompiledScopes {
  const paths: CompiledPattern[] = [];
  let own = false;
  for (const e of entries) {
    if (e === OWN) {
      own = true;
      continue;
    }
    const p = compilePattern(e);
    if (p.ok) paths.push(p.pattern);
  }
  return {
    entries: Object.freeze([...entries]),
    paths,
    own,
    everything: paths.some((p) => p.segments.length === 0 && !p.anchored),
  };
}

/** Whether `pattern` matches the request path given as decoded segments (as the match index does). */
export function patternMatchesSegments(pattern: CompiledPattern, segments: readonly string[]): boolean {
  const segs = pattern.segments;
  if (segments.length < segs.length) return false;
  if (pattern.anchored && segments.length !== segs.length) return false;
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!;
    const seg = segments[i]!;
    if (s.kind === 'wildcard') {
      if (seg.length === 0) return false;
    } else if (s.value !== seg) return false;
  }
  return true;
}

/** Whether a request path (query ignored) lies under one of the path scopes. */
export function pathInScopes(scopes: CompiledScopes, path: string): boolean {
  if (scopes.everything) return true;
  if (scopes.paths.length === 0) return false;
  const segments = splitRequestPath(path);
  for (const p of scopes.paths) if (patternMatchesSegments(p, segments)) return true;
  return false;
}

/**
 * Coverage: whether every path `pattern` matches is also matched by `scope` (pattern ⊆ scope).
 *
 * A pattern of n segments matches paths of at least n segments (exactly n when anchored) whose
 * first n segments fit its segments; every segment it accepts is non-empty. So a scope of m
 * segments covers it when
 * - the scope is not anchored: m ≤ n, and each of the scope's segments accepts all the pattern's
 *   segment accepts there (a scope wildcard accepts any non-empty segment; a scope literal only
 *   the same literal);
 * - the scope is anchored: the pattern is anchored too, m = n, and the same per segment.
 */
export function covers(scope: CompiledPattern, pattern: CompiledPattern): boolean {
  const m = scope.segments.length;
  const n = pattern.segments.length;
  if (scope.anchored) {
    if (!pattern.anchored || m !== n) return false;
  } else if (m > n) return false;
  for (let i = 0; i < m; i++) {
    const s = scope.segments[i]!;
    if (s.kind === 'wildcard') continue;
    const p = pattern.segments[i]!;
    if (p.kind !== 'literal' || p.value !== s.value) return false;
  }
  return true;
}

/** Whether a hook with this PathPattern may be created by an owner with these scopes. */
export function patternAllowed(scopes: CompiledScopes, pattern: CompiledPattern): boolean {
  return scopes.own || scopes.paths.some((s) => covers(s, pattern));
}

/** Whether a request is inside the scopes: by path, or (own) because the owner made it. */
export function requestInScopes(scopes: CompiledScopes, path: string, owner: string, user?: string): boolean {
  return pathInScopes(scopes, path) || (scopes.own && user !== undefined && user === owner);
}
