import { BEFORE_COMPLETION, type Hook, isoTimestamp } from '../hook/hook.js';
import { internHook } from '../hook/intern-hook.js';
import { TemplateSizeError } from '../hook/template.js';
import { type CompiledHook, compileHook, methodFires, statusFires } from './compiled-hook.js';
import type { CallbackRequest, FiredEvent, FiredEventSink } from './fired-event.js';
import { MatchIndex } from './match-index.js';

/** A request that may trigger hooks, as the proxy or the report API saw it. */
export interface Trigger {
  method: string;
  /** Path as received, without the query string. */
  path: string;
  /** Absolute URI; a function so that it is only built when some hook fires. */
  uri: () => string;
  /** The response status: set for the `after` phase. */
  statusCode?: number;
  /**
   * The user who made the request, resolved at most once and only when asked (a matched hook
   * whose owner's scope is `own`); absent when no identity provider is configured.
   */
  requestUser?: () => Promise<string | undefined>;
}

export type Phase = 'before' | 'after';

export interface EngineOptions {
  /** The events switch: when it is off nothing fires. */
  enabled?: () => boolean;
  now?: () => Date;
  maxBodyBytes?: number;
  /** A hook whose callback could not be rendered (body over the size limit). */
  onRenderError?: (hook: Hook, err: Error) => void;
  /** Told how many hooks fired for a trigger (metrics). */
  onFired?: (phase: Phase, count: number) => void;
  /**
   * The scope rule (src/users/owner-scopes.ts): whether the hook's owner may observe the request.
   * A promise when it must wait (the request's user); absent: every owner sees everything.
   */
  admits?: (owner: string, trigger: Trigger) => boolean | Promise<boolean>;
  /** Applied to `$REQUEST_URI` once per firing (`--redact-query-params`). */
  redactUri?: (uri: string) => string;
  /** Firing that had to wait for a scope verdict failed (the proxied request is long answered). */
  onFireError?: (err: unknown) => void;
}

/** What one firing did at once, and what it still waits for (scope verdicts that need the request's user). */
interface Firing {
  count: number;
  later?: Promise<number>;
}
const NOTHING_FIRED: Firing = { count: 0 };

export interface Preview {
  hook: Hook;
  captures: string[];
  request: CallbackRequest;
}

/**
 * Matches requests against every hook of every user and turns the matches into rendered
 * callbacks. One index per hook type, so a proxied request only ever walks the hooks of its
 * phase, and an empty phase costs nothing.
 */
export class MatchEngine {
  private readonly indexes = {
    before: new MatchIndex<CompiledHook>(),
    after: new MatchIndex<CompiledHook>(),
  };
  /**
   * Hooks a 410 disabled: known (for `get`), but out of the indexes. The active ones are found
   * through the indexes' own maps, so that 100,000 hooks need no third map by Id.
   */
  private readonly disabled = new Map<string, CompiledHook>();

  constructor(
    private readonly sink: FiredEventSink,
    private readonly opts: EngineOptions = {},
  ) {}

  /**
   * Replaces the whole set (start-up, or a resync after lost notifications). The engine keeps the
   * hooks, as `hookSaved` does.
   */
  load(hooks: Iterable<Hook>): void {
    this.indexes.before.clear();
    this.indexes.after.clear();
    this.disabled.clear();
    for (const h of hooks) this.hookSaved(h);
  }

  /**
   * Adds or replaces a hook. The engine keeps the object, so it must not be changed afterwards;
   * values it has in common with other hooks are swapped for shared frozen ones (intern-hook.ts).
   */
  hookSaved(hook: Hook): void {
    internHook(hook);
    this.hookDeleted(hook.Id);
    const { compiled, pattern } = compileHook(hook, this.opts.maxBodyBytes);
    // A disabled hook (410 Gone) stays known but leaves the index until it is replaced.
    if (hook.State !== 'active') this.disabled.set(hook.Id, compiled);
    else this.indexFor(hook.Type).set(hook.Id, pattern, compiled);
  }

  hookDeleted(id: string): void {
    if (!this.indexes.before.delete(id) && !this.indexes.after.delete(id)) this.disabled.delete(id);
  }

  private find(id: string): CompiledHook | undefined {
    return this.indexes.before.get(id) ?? this.indexes.after.get(id) ?? this.disabled.get(id);
  }

  get(id: string): Hook | undefined {
    return this.find(id)?.hook;
  }

  /** Whether the hook is known and active: exactly the hooks in an index. */
  isActive(id: string): boolean {
    return this.indexes.before.has(id) || this.indexes.after.has(id);
  }

  /** Number of hooks known, active or not. */
  get size(): number {
    return this.indexes.before.size + this.indexes.after.size + this.disabled.size;
  }

  /** The Ids of every hook the engine knows, active or not. */
  *ids(): IterableIterator<string> {
    yield* this.indexes.before.keys();
    yield* this.indexes.after.keys();
    yield* this.disabled.keys();
  }

  /** Whether any hook could fire in this phase: lets the proxy skip all trigger work. */
  watches(phase: Phase): boolean {
    return this.indexes[phase].size > 0 && (this.opts.enabled?.() ?? true);
  }

  /**
   * Matches, renders and hands the callbacks to the sink. Returns how many hooks fired at once;
   * hooks whose scope verdict needs the request's user follow when it is known.
   */
  fire(phase: Phase, trigger: Trigger): number {
    const f = this.fireNow(phase, trigger);
    if (f.later !== undefined) f.later.catch((err: unknown) => this.opts.onFireError?.(err));
    return f.count;
  }

  /** As `fire`, and waits for the verdicts that need the request's user: how many fired in all. */
  async fireAndWait(phase: Phase, trigger: Trigger): Promise<number> {
    const f = this.fireNow(phase, trigger);
    return f.count + (f.later === undefined ? 0 : await f.later);
  }

  private fireNow(phase: Phase, trigger: Trigger): Firing {
    if (!this.watches(phase)) return NOTHING_FIRED;
    const matches = this.indexes[phase].match(trigger.path);
    if (matches.length === 0) return NOTHING_FIRED;
    const events: FiredEvent[] = [];
    let deferred: Promise<FiredEvent | undefined>[] | undefined;
    let firedAt: Date | undefined;
    let uri: string | undefined;
    const admits = this.opts.admits;
    for (const m of matches) {
      const h = m.value;
      if (!methodFires(h, trigger.method)) continue;
      if (phase === 'after' && trigger.statusCode !== undefined && !statusFires(h, trigger.statusCode))
        continue;
      const verdict = admits === undefined ? true : admits(h.hook.Owner, trigger);
      if (verdict === false) continue;
      firedAt ??= this.opts.now?.() ?? new Date();
      uri ??= this.uriOf(trigger);
      if (verdict === true) {
        const e = this.event(h, m.captures, trigger, uri, firedAt);
        if (e) events.push(e);
      } else {
        const at = firedAt;
        const u = uri;
        deferred ??= [];
        deferred.push(
          verdict.then(
            (ok) => (ok ? this.event(h, m.captures, trigger, u, at) : undefined),
            () => undefined,
          ),
        );
      }
    }
    if (events.length > 0) {
      this.sink.accept(events);
      this.opts.onFired?.(phase, events.length);
    }
    if (deferred === undefined) return { count: events.length };
    const later = Promise.all(deferred).then((list) => {
      const admitted = list.filter((e): e is FiredEvent => e !== undefined);
      if (admitted.length > 0) {
        this.sink.accept(admitted);
        this.opts.onFired?.(phase, admitted.length);
      }
      return admitted.length;
    });
    return { count: events.length, later };
  }

  private uriOf(trigger: Trigger): string {
    const uri = trigger.uri();
    return this.opts.redactUri === undefined ? uri : this.opts.redactUri(uri);
  }

  private event(
    h: CompiledHook,
    captures: string[],
    trigger: Trigger,
    uri: string,
    firedAt: Date,
  ): FiredEvent | undefined {
    const request = this.render(h, captures, trigger, uri, firedAt);
    if (!request) return undefined;
    return {
      hookId: h.hook.Id,
      owner: h.hook.Owner,
      hookType: h.hook.Type,
      persist: h.hook.Persist,
      firedAt: firedAt.toISOString(),
      trigger: {
        method: trigger.method,
        path: trigger.path,
        ...(trigger.statusCode !== undefined && { statusCode: trigger.statusCode }),
      },
      request,
    };
  }

  /**
   * The dry run: which of `owner`'s hooks would fire for this request and the exact callbacks,
   * without sending. Without a status only the hooks that do not depend on one are judged; the
   * owner's scopes apply as when firing.
   */
  async preview(owner: string, trigger: Trigger): Promise<Preview[]> {
    const out: Preview[] = [];
    const now = this.opts.now?.() ?? new Date();
    const uri = this.uriOf(trigger);
    const admits = this.opts.admits;
    for (const phase of ['before', 'after'] as const) {
      for (const m of this.indexes[phase].match(trigger.path)) {
        const h = m.value;
        if (h.hook.Owner !== owner || !methodFires(h, trigger.method)) continue;
        if (phase === 'after') {
          if (trigger.statusCode === undefined) {
            if (h.whiteList.size > 0 || h.blackList.size > 0) continue;
          } else if (!statusFires(h, trigger.statusCode)) continue;
        }
        if (admits !== undefined && !(await admits(owner, trigger))) continue;
        const t = phase === 'before' ? { ...trigger, statusCode: undefined } : trigger;
        const request = this.render(h, m.captures, t, uri, now);
        if (request) out.push({ hook: h.hook, captures: m.captures, request });
      }
    }
    return out;
  }

  private render(
    h: CompiledHook,
    captures: string[],
    t: Trigger,
    uri: string,
    at: Date,
  ): CallbackRequest | undefined {
    const hook = h.hook;
    const request: CallbackRequest = {
      method: hook.CallbackMethod,
      url: hook.Callback,
      headers: { ...hook.Headers },
    };
    if (!h.hasBody) return request;
    try {
      request.body = h.template.render({
        requestPath: t.path,
        requestUri: uri,
        requestMethod: t.method,
        statusCode: t.statusCode,
        hookId: hook.Id,
        hookType: hook.Type,
        timestamp: isoTimestamp(at),
        captures,
      });
    } catch (err) {
      if (!(err instanceof TemplateSizeError)) throw err;
      this.opts.onRenderError?.(hook, err);
      return undefined;
    }
    request.headers['content-type'] = hook.CallbackContentMediaType;
    return request;
  }

  private indexFor(type: Hook['Type']): MatchIndex<CompiledHook> {
    return type === BEFORE_COMPLETION ? this.indexes.before : this.indexes.after;
  }
}
