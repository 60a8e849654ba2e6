import type { Hook } from '../hook/hook.js';
import { type CompiledPattern, compilePattern } from '../hook/pattern.js';
import { type CompiledTemplate, compileTemplate } from '../hook/template.js';

/**
 * A hook prepared for the hot path: pattern, template and filters compiled once when the hook is
 * saved, so that matching and firing a request does no parsing.
 */
export interface CompiledHook {
  readonly hook: Hook;
  readonly pattern: CompiledPattern;
  readonly template: CompiledTemplate;
  readonly anyMethod: boolean;
  readonly methods: ReadonlySet<string>;
  readonly whiteList: ReadonlySet<number>;
  readonly blackList: ReadonlySet<number>;
  /** GET and DELETE callbacks carry no body (SPEC §2). */
  readonly hasBody: boolean;
}

export function compileHook(hook: Hook, maxBodyBytes?: number): CompiledHook {
  const pattern = compilePattern(hook.PathPattern);
  // Stored hooks were validated on the way in; a failure here means a corrupt store row.
  if (!pattern.ok) throw new Error(`hook ${hook.Id}: stored PathPattern is invalid: ${pattern.message}`);
  return {
    hook,
    pattern: pattern.pattern,
    template: compileTemplate(
      hook.CallbackContent,
      hook.CallbackContentMediaType,
      maxBodyBytes === undefined ? {} : { maxBytes: maxBodyBytes },
    ),
    anyMethod: hook.Methods.includes('*'),
    methods: new Set(hook.Methods),
    whiteList: new Set(hook.StatusCodeWhiteList),
    blackList: new Set(hook.StatusCodeBlackList),
    hasBody: hook.CallbackMethod !== 'GET' && hook.CallbackMethod !== 'DELETE',
  };
}

/** Methods rule: the request's method is listed, or the hook takes any method. */
export function methodFires(h: CompiledHook, method: string): boolean {
  return h.anyMethod || h.methods.has(method);
}

/** SPEC §4: fires iff (white list empty or status in it) and status not in the black list. */
export function statusFires(h: CompiledHook, status: number): boolean {
  return (h.whiteList.size === 0 || h.whiteList.has(status)) && !h.blackList.has(status);
}
