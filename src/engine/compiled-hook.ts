import type { Hook, UrlValueEscape } from '../hook/index.js';
import {
  type CompiledPattern,
  type CompiledTemplate,
  compilePattern,
  compileTemplate,
  compileUrlTemplate,
} from '../hook/index.js';

/*
 * The hot-path rules of a hook, read straight off the stored hook. An object per hook holding
 * its compiled template, method set and status sets cost about 80 bytes for each of 100,000
 * hooks, and most hooks never fire (docs/BENCHMARKS.md "Hook index: size and start-up"): the
 * lists are short, shared and frozen (intern-hook.ts), so `includes` is as quick as a Set, and a
 * template is compiled the first time its hook fires.
 */

/** The hook's PathPattern, compiled for the match index. */
export function storedPattern(hook: Hook): CompiledPattern {
  const pattern = compilePattern(hook.PathPattern);
  // Stored hooks were validated on the way in; a failure here means a corrupt store row.
  if (!pattern.ok) throw new Error(`hook ${hook.Id}: stored PathPattern is invalid: ${pattern.message}`);
  return pattern.pattern;
}

/** Methods rule: the request's method is listed, or the hook takes any method. */
export function methodFires(h: Hook, method: string): boolean {
  const methods = h.Methods;
  return methods.includes('*') || methods.includes(method);
}

/** SPEC §4: fires iff (white list empty or status in it) and status not in the black list. */
export function statusFires(h: Hook, status: number): boolean {
  const white = h.StatusCodeWhiteList;
  return (white.length === 0 || white.includes(status)) && !h.StatusCodeBlackList.includes(status);
}

/** Whether the hook's status lists decide (a hook without lists fires for every status). */
export function hasStatusLists(h: Hook): boolean {
  return h.StatusCodeWhiteList.length > 0 || h.StatusCodeBlackList.length > 0;
}

/** GET and DELETE callbacks carry no body (SPEC §2). */
export function hasBody(h: Hook): boolean {
  return h.CallbackMethod !== 'GET' && h.CallbackMethod !== 'DELETE';
}

const NO_OPTIONS = Object.freeze({});

/**
 * Compiled templates, made on a hook's first firing. A hook's own template (`CallbackContent`)
 * lives as long as the hook object does (a replaced hook is a new object); the default event
 * document is one template per media type, shared by every hook without a `CallbackContent`.
 */
export class TemplateCache {
  readonly #own = new WeakMap<Hook, CompiledTemplate>();
  readonly #defaults = new Map<string, CompiledTemplate>();
  readonly #opts: { maxBytes?: number };
  // null: the Callback takes no template values (HTTP), so it goes out as written.
  readonly #urls = new WeakMap<Hook, CompiledTemplate | null>();

  constructor(
    maxBodyBytes: number | undefined,
    private readonly urlEscapeFor: ((callback: string) => UrlValueEscape | undefined) | undefined,
  ) {
    this.#opts = maxBodyBytes === undefined ? NO_OPTIONS : { maxBytes: maxBodyBytes };
  }

  /** The Callback URL's template when its scheme takes template values; undefined otherwise. */
  url(hook: Hook): CompiledTemplate | undefined {
    if (this.urlEscapeFor === undefined) return undefined;
    let t = this.#urls.get(hook);
    if (t === undefined) {
      const esc = this.urlEscapeFor(hook.Callback);
      t = esc === undefined ? null : compileUrlTemplate(hook.Callback, esc);
      this.#urls.set(hook, t);
    }
    return t ?? undefined;
  }

  /** Throws as compileTemplate does (TemplateSizeError when the fixed text alone is over the limit). */
  of(hook: Hook): CompiledTemplate {
    if (hook.CallbackContent === undefined) {
      let t = this.#defaults.get(hook.CallbackContentMediaType);
      if (t === undefined) {
        t = compileTemplate(undefined, hook.CallbackContentMediaType, this.#opts);
        // Media types are few in practice; an unusual one is not worth remembering forever.
        if (this.#defaults.size < 1024) this.#defaults.set(hook.CallbackContentMediaType, t);
      }
      return t;
    }
    let t = this.#own.get(hook);
    if (t === undefined) {
      t = compileTemplate(
        hook.CallbackContent,
        hook.CallbackContentMediaType,
        hook.ContentEscape === undefined ? this.#opts : { ...this.#opts, escape: hook.ContentEscape },
      );
      this.#own.set(hook, t);
    }
    return t;
  }
}
