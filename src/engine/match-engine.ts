import { BEFORE_COMPLETION, type Hook, isoTimestamp } from '../hook/hook.js';
import { internHook } from '../hook/intern-hook.js';
import { TemplateSizeError } from '../hook/template.js';
import { type CompiledHook, compileHook, methodFires, statusFires } from './compiled-hook.js';
import type { CallbackRequest, FiredEvent, FiredEventSink, TriggerInfo } from './fired-event.js';
import { type Match, MatchIndex } from './match-index.js';

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
   * The user who made the request, when already known: a report's `User`, a dry run's. The
   * empty string is an anonymous request.
   */
  user?: string;
  /**
   * Resolves the user of a proxied request (the identity provider), called at most once per
   * firing and only when some hook matched, so that requests no hook watches never pay for it.
   * Present only when a provider is configured; undefined or a rejection mean anonymous.
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
  /** The sink failed for callbacks fired after the request's user was resolved (logged). */
  onSinkError?: (err: Error) => void;
}

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
   * Matches, renders and hands the callbacks to the sink. Returns how many hooks fired, or, when
   * the request's user has to be resolved first (`requestUser`), how many matched: their
   * callbacks then go to the sink once the user is known, and the caller never waits for it.
   */
  fire(phase: Phase, trigger: Trigger): number {
    if (!this.watches(phase)) return 0;
    const matches = this.indexes[phase].match(trigger.path);
    if (matches.length === 0) return 0;
    // The hooks that fire, compacted in place (the array is the index's fresh answer).
    let n = 0;
    for (const m of matches) {
      const h = m.value;
      if (!methodFires(h, trigger.method)) continue;
      if (phase === 'after' && trigger.statusCode !== undefined && !statusFires(h, trigger.statusCode))
        continue;
      matches[n++] = m;
    }
    if (n === 0) return 0;
    matches.length = n;
    const hits = matches;
    // Both are taken now: the firing time is the request's, and the URI is read off a socket
    // that may be gone once the user is known.
    const firedAt = this.opts.now?.() ?? new Date();
    const uri = trigger.uri();
    if (trigger.user === undefined && trigger.requestUser !== undefined) {
      trigger.requestUser().then(
        (user) => this.emit(phase, hits, trigger, uri, firedAt, user ?? ''),
        () => this.emit(phase, hits, trigger, uri, firedAt, ''),
      );
      return hits.length;
    }
    return this.emit(phase, hits, trigger, uri, firedAt, trigger.user ?? '');
  }

  /**
   * Renders the matched hooks' callbacks for a request whose user is known ('' = anonymous) and
   * hands them to the sink. Runs once per firing, after the user is resolved: where a rule that
   * depends on the user (a hook owner's scopes) decides which matched hooks fire.
   */
  private emit(
    phase: Phase,
    hits: Match<CompiledHook>[],
    trigger: Trigger,
    uri: string,
    firedAt: Date,
    user: string,
  ): number {
    const events: FiredEvent[] = [];
    const info: TriggerInfo = {
      method: trigger.method,
      path: trigger.path,
      ...(trigger.statusCode !== undefined && { statusCode: trigger.statusCode }),
      ...(user !== '' && { user }),
    };
    for (const m of hits) {
      const h = m.value;
      const request = this.render(h, m.captures, trigger, uri, firedAt, user);
      if (!request) continue;
      events.push({
        hookId: h.hook.Id,
        owner: h.hook.Owner,
        hookType: h.hook.Type,
        persist: h.hook.Persist,
        firedAt: firedAt.toISOString(),
        trigger: info,
        request,
      });
    }
    if (events.length > 0) {
      try {
        this.sink.accept(events);
      } catch (err) {
        // Called from a promise when the user was resolved first: nobody above to catch it.
        if (trigger.requestUser === undefined) throw err;
        this.opts.onSinkError?.(err as Error);
        return 0;
      }
      this.opts.onFired?.(phase, events.length);
    }
    return events.length;
  }

  /**
   * The dry run: which of `owner`'s hooks would fire for this request and the exact callbacks,
   * without sending. Without a status only the hooks that do not depend on one are judged.
   */
  preview(owner: string, trigger: Trigger): Preview[] {
    const out: Preview[] = [];
    const now = this.opts.now?.() ?? new Date();
    const uri = trigger.uri();
    for (const phase of ['before', 'after'] as const) {
      for (const m of this.indexes[phase].match(trigger.path)) {
        const h = m.value;
        if (h.hook.Owner !== owner || !methodFires(h, trigger.method)) continue;
        if (phase === 'after') {
          if (trigger.statusCode === undefined) {
            if (h.whiteList.size > 0 || h.blackList.size > 0) continue;
          } else if (!statusFires(h, trigger.statusCode)) continue;
        }
        const t = phase === 'before' ? { ...trigger, statusCode: undefined } : trigger;
        const request = this.render(h, m.captures, t, uri, now, trigger.user ?? '');
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
    user: string,
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
        requestUser: user,
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
