import type { Hook } from '../hook/hook.js';
import { type CompiledPattern, compilePattern } from '../hook/pattern.js';
import { type CompiledTemplate, compileTemplate } from '../hook/template.js';

/**
 * A hook prepared for the hot path: pattern, template and filters compiled once when the hook is
 * saved, so that matching and firing a request does no parsing.
 */
export interface CompiledHook {
  readonly hook: Hook;
  readonly template: CompiledTemplate;
  readonly anyMethod: boolean;
  readonly methods: ReadonlySet<string>;
  readonly whiteList: ReadonlySet<number>;
  readonly blackList: ReadonlySet<number>;
  /** GET and DELETE callbacks carry no body (SPEC §2). */
  readonly hasBody: boolean;
}

// At 100,000 hooks per-hook objects are most of the daemon's memory (docs/BENCHMARKS.md "Size"):
// the sets and templates that many hooks have in common are made once and shared. They are
// never mutated after construction, so sharing is safe.
const EMPTY: ReadonlySet<never> = new Set();
const methodSets = new Map<string, ReadonlySet<string>>();
/** By list identity: the lists of stored hooks are shared and frozen (intern-hook.ts), so no key to build. */
const methodSetsByList = new WeakMap<readonly string[], ReadonlySet<string>>();
const NO_OPTIONS = Object.freeze({});
/** Default-body templates by body limit, then media type. */
const defaultTemplates = new Map<number | undefined, Map<string, CompiledTemplate>>();

function sharedMethods(methods: readonly string[]): ReadonlySet<string> {
  let set = methodSetsByList.get(methods);
  if (set !== undefined) return set;
  const key = methods.join(' ');
  set = methodSets.get(key);
  if (set === undefined) {
    set = new Set(methods);
    // Method lists are few in practice; an unusual one is not worth remembering forever.
    if (methodSets.size < 1024) methodSets.set(key, set);
  }
  if (Object.isFrozen(methods)) methodSetsByList.set(methods, set);
  return set;
}

function statusSet(codes: readonly number[]): ReadonlySet<number> {
  return codes.length === 0 ? EMPTY : new Set(codes);
}

function templateOf(hook: Hook, maxBodyBytes: number | undefined): CompiledTemplate {
  const opts = maxBodyBytes === undefined ? NO_OPTIONS : { maxBytes: maxBodyBytes };
  if (hook.CallbackContent !== undefined) {
    return compileTemplate(hook.CallbackContent, hook.CallbackContentMediaType, opts);
  }
  let byType = defaultTemplates.get(maxBodyBytes);
  if (byType === undefined) {
    byType = new Map();
    if (defaultTemplates.size < 16) defaultTemplates.set(maxBodyBytes, byType);
  }
  let t = byType.get(hook.CallbackContentMediaType);
  if (t === undefined) {
    t = compileTemplate(undefined, hook.CallbackContentMediaType, opts);
    if (byType.size < 1024) byType.set(hook.CallbackContentMediaType, t);
  }
  return t;
}

/** The compiled hook and its pattern: the pattern goes into the match index and is not kept. */
export function compileHook(
  hook: Hook,
  maxBodyBytes?: number,
): { compiled: CompiledHook; pattern: CompiledPattern } {
  const pattern = compilePattern(hook.PathPattern);
  // Stored hooks were validated on the way in; a failure here means a corrupt store row.
  if (!pattern.ok) throw new Error(`hook ${hook.Id}: stored PathPattern is invalid: ${pattern.message}`);
  const compiled: CompiledHook = {
    hook,
    template: templateOf(hook, maxBodyBytes),
    anyMethod: hook.Methods.includes('*'),
    methods: sharedMethods(hook.Methods),
    whiteList: statusSet(hook.StatusCodeWhiteList),
    blackList: statusSet(hook.StatusCodeBlackList),
    hasBody: hook.CallbackMethod !== 'GET' && hook.CallbackMethod !== 'DELETE',
  };
  return { compiled, pattern: pattern.pattern };
}

/** Methods rule: the request's method is listed, or the hook takes any method. */
export function methodFires(h: CompiledHook, method: string): boolean {
  return h.anyMethod || h.methods.has(method);
}

/** SPEC §4: fires iff (white list empty or status in it) and status not in the black list. */
export function statusFires(h: CompiledHook, status: number): boolean {
  return (h.whiteList.size === 0 || h.whiteList.has(status)) && !h.blackList.has(status);
}
