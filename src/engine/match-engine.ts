import { BEFORE_COMPLETION, type Hook, internHook } from '../hook/index.js';
import { hasStatusLists, methodFires, statusFires, storedPattern, TemplateCache } from './compiled-hook.js';
import { DeferredIndex } from './deferred-index.js';
import type { EngineOptions, Phase, ScopeVerdict } from './engine-options.js';
import type { CallbackRequest, FiredEvent, FiredEventSink, Trigger, TriggerInfo } from './fired-event.js';
import { filterInput, HookCode, previewOf, TransformedSink } from './hook-code.js';
import { HookSetObservers } from './hook-set-observers.js';
import { type Match, MatchIndex } from './match-index.js';
import { renderCallback } from './render-callback.js';

export type { EngineOptions, Phase, ScopeVerdict } from './engine-options.js';
export type { Trigger } from './fired-event.js';

/**
 * What one firing did at once (`now`), how many matched hooks still wait for the request's user
 * or their owner's scopes (`waiting`), and the promise of how many of those fired.
 */
interface Firing {
  now: number;
  waiting: number;
  later?: Promise<number>;
}
const NOTHING_FIRED: Firing = { now: 0, waiting: 0 };
const patternSource = (hook: Hook): string => hook.PathPattern;

export interface Preview {
  hook: Hook;
  captures: string[];
  request: CallbackRequest;
  /** No status was given and the hook's status lists decide: it fires for some statuses only. */
  needsStatus?: true;
  /** The hook's Filter judged (only when it has one). */
  filter?: { matched: boolean; error?: string };
  /** What the hook's Transform made of the callback (only when it has one and the filter matched). */
  transform?: { payload?: string; headers: Record<string, string>; skip: boolean; error?: string };
}

/**
 * Matches requests against every hook of every user and turns the matches into rendered
 * callbacks. One index per hook type, so a proxied request only ever walks the hooks of its
 * phase, and an empty phase costs nothing.
 */
export class MatchEngine {
  private readonly uncompilable = (h: Hook, err: Error) => this.opts.onStoredPatternError?.(h, err);
  /** Stored hooks loaded in bulk are compiled on first use (deferred-index.ts). */
  private readonly indexes = {
    before: new DeferredIndex<Hook>(storedPattern, patternSource, this.uncompilable),
    after: new DeferredIndex<Hook>(storedPattern, patternSource, this.uncompilable),
  };
  /**
   * Hooks a 410 disabled: known (for `get`), but out of the indexes. The active ones are found
   * through the indexes' own maps, so that 100,000 hooks need no third map by Id.
   */
  private readonly disabled = new Map<string, Hook>();
  private readonly templates: TemplateCache;
  /** Filters and transforms: `bodyNeeds`, each hook's `lastFilterError`, the error count. */
  readonly code: HookCode;
  /** Callbacks of hooks with a Transform: sent once it has run. */
  private readonly transformed: TransformedSink;
  /** Told of every change to the hook set (`changes.observe`): the workers follow it so. */
  readonly changes = new HookSetObservers();

  constructor(
    private readonly sink: FiredEventSink,
    private readonly opts: EngineOptions = {},
  ) {
    this.templates = new TemplateCache(opts.maxBodyBytes, opts.callbackEscape);
    this.code = new HookCode({ ...opts.code, ...(opts.now !== undefined && { now: opts.now }) });
    this.transformed = new TransformedSink(sink, this.code, opts);
  }

  /**
   * Replaces the whole set (start-up, or a resync after lost notifications). The engine keeps the
   * hooks, as `hookSaved` does.
   */
  load(hooks: Iterable<Hook>): void {
    this.indexes.before.clear();
    this.indexes.after.clear();
    this.disabled.clear();
    this.code.cleared();
    // Nothing to replace in emptied indexes (Ids are unique across the stores).
    for (const h of hooks) this.add(internHook(h), true);
    this.changes.loaded();
  }

  /**
   * Adds or replaces a hook. The engine keeps the object, so it must not be changed afterwards;
   * values it has in common with other hooks are swapped for shared frozen ones (intern-hook.ts).
   */
  hookSaved(hook: Hook): void {
    internHook(hook);
    this.remove(hook.Id);
    this.add(hook);
    this.changes.saved(hook);
  }

  /** `loaded`: a stored hook of a bulk load, its pattern compiled when a request may need it. */
  private add(hook: Hook, loaded = false): void {
    // A disabled hook (410 Gone) stays known but leaves the index until it is replaced.
    if (hook.State !== 'active') {
      this.disabled.set(hook.Id, hook);
      return;
    }
    if (loaded) this.indexFor(hook.Type).load(hook.Id, hook);
    else this.indexFor(hook.Type).set(hook.Id, storedPattern(hook), hook);
    this.code.added(hook, hook.Type === BEFORE_COMPLETION ? 'before' : 'after');
  }

  hookDeleted(id: string): void {
    this.remove(id);
    this.changes.deleted(id);
  }

  private remove(id: string): void {
    this.code.removed(id);
    if (!this.indexes.before.delete(id) && !this.indexes.after.delete(id)) this.disabled.delete(id);
  }

  get(id: string): Hook | undefined {
    return this.indexes.before.get(id) ?? this.indexes.after.get(id) ?? this.disabled.get(id);
  }

  /** Whether the hook is known and active: exactly the hooks in an index. */
  isActive(id: string): boolean {
    return this.indexes.before.has(id) || this.indexes.after.has(id);
  }

  /** Number of hooks known, active or not. */
  get size(): number {
    return this.indexes.before.size + this.indexes.after.size + this.disabled.size;
  }

  /** Number of disabled hooks (410 Gone, auto-disable), for metrics. */
  get disabledCount(): number {
    return this.disabled.size;
  }

  /** The Ids of every hook the engine knows, active or not. */
  *ids(): IterableIterator<string> {
    yield* this.indexes.before.keys();
    yield* this.indexes.after.keys();
    yield* this.disabled.keys();
  }

  /** Resolves once the transforms running now have handed their callbacks to the sink. */
  settled(): Promise<void> {
    return this.transformed.settled();
  }

  /** Whether any hook could fire in this phase: lets the proxy skip all trigger work. */
  watches(phase: Phase): boolean {
    return this.indexes[phase].size > 0 && (this.opts.enabled?.() ?? true);
  }

  /**
   * Matches, renders and hands the callbacks to the sink. Returns how many hooks fired, or, when
   * the request's user has to be resolved first (`requestUser`), how many matched: their
   * callbacks then go to the sink once the user is known, and the caller never waits for it.
   * A matched hook whose owner's path scopes do not hold the request is dropped at once, before
   * anyone asks who made the request.
   */
  fire(phase: Phase, trigger: Trigger): number {
    const f = this.fireNow(phase, trigger);
    if (f.later !== undefined) f.later.catch((err: unknown) => this.opts.onSinkError?.(err as Error));
    return f.now + f.waiting;
  }

  /** As `fire`, and waits for what had to wait (the request's user, an owner's scopes): how many fired. */
  async fireAndWait(phase: Phase, trigger: Trigger): Promise<number> {
    const f = this.fireNow(phase, trigger);
    const n = f.now + (f.later === undefined ? 0 : await f.later);
    await this.transformed.settled();
    return n;
  }

  private fireNow(phase: Phase, trigger: Trigger): Firing {
    if (!this.watches(phase)) return NOTHING_FIRED;
    const matches = this.indexes[phase].match(trigger.path);
    if (matches.length === 0) return NOTHING_FIRED;
    // The hooks that fire, compacted in place (the array is the index's fresh answer).
    let n = 0;
    for (const m of matches) {
      const h = m.value;
      if (!methodFires(h, trigger.method)) continue;
      if (trigger.onlyOwner !== undefined && h.Owner !== trigger.onlyOwner) continue;
      if (trigger.bodyReaders !== undefined && (trigger.bodyReaders === 'only') !== this.code.waitsForBody(h))
        continue;
      if (phase === 'after' && trigger.statusCode !== undefined && !statusFires(h, trigger.statusCode))
        continue;
      matches[n++] = m;
    }
    if (n === 0) return NOTHING_FIRED;
    matches.length = n;
    const hits = matches;
    // Both are taken now: the firing time is the request's, and the URI is read off a socket
    // that may be gone once the user is known.
    const firedAt = this.opts.now?.() ?? new Date();
    const uri = this.uriOf(trigger);
    const scopes = this.opts.scopes;
    if (scopes === undefined) return this.resolveUser(phase, hits, undefined, trigger, uri, firedAt);
    let verdicts: (ScopeVerdict | Promise<ScopeVerdict>)[] | undefined;
    let missing = false;
    for (let i = 0; i < hits.length; i++) {
      const v = scopes.verdict(hits[i]!.value.Owner, trigger.path);
      if (v instanceof Promise) missing = true;
      verdicts ??= [];
      verdicts.push(v);
    }
    if (!missing) return this.resolveUser(phase, hits, verdicts as ScopeVerdict[], trigger, uri, firedAt);
    // An owner whose scopes are not cached yet (added a moment ago, maybe by another instance).
    const later = Promise.all(verdicts!).then((vs) => {
      const f = this.resolveUser(phase, hits, vs, trigger, uri, firedAt);
      return f.later === undefined ? f.now : f.later;
    });
    return { now: 0, waiting: hits.length, later };
  }

  /**
   * Drops the hooks whose owner may not observe the request at all, then renders the rest once
   * the request's user is known: at once when it is (a report's `User`) or nobody can tell (no
   * provider), else when the provider has answered.
   */
  private resolveUser(
    phase: Phase,
    matched: Match<Hook>[],
    verdicts: ScopeVerdict[] | undefined,
    trigger: Trigger,
    uri: string,
    firedAt: Date,
  ): Firing {
    let hits = matched;
    let ownOnly: Set<Match<Hook>> | undefined;
    if (verdicts !== undefined) {
      hits = [];
      for (let i = 0; i < matched.length; i++) {
        const v = verdicts[i]!;
        if (v === 'out') continue;
        if (v === 'own') {
          ownOnly ??= new Set();
          ownOnly.add(matched[i]!);
        }
        hits.push(matched[i]!);
      }
      if (hits.length === 0) return NOTHING_FIRED;
    }
    if (trigger.user === undefined && trigger.requestUser !== undefined) {
      const later = trigger.requestUser().then(
        (user) => this.emit(phase, hits, ownOnly, trigger, uri, firedAt, user ?? ''),
        () => this.emit(phase, hits, ownOnly, trigger, uri, firedAt, ''),
      );
      return { now: 0, waiting: hits.length, later };
    }
    return { now: this.emit(phase, hits, ownOnly, trigger, uri, firedAt, trigger.user ?? ''), waiting: 0 };
  }

  private uriOf(trigger: Trigger): string {
    const uri = trigger.uri();
    return this.opts.redactUri === undefined ? uri : this.opts.redactUri(uri);
  }

  /**
   * Renders the matched hooks' callbacks for a request whose user is known ('' = anonymous) and
   * hands them to the sink. A hook in `ownOnly` (its owner's scope `own`, and no path scope holds
   * the request) fires only when its owner made the request.
   */
  private emit(
    phase: Phase,
    hits: Match<Hook>[],
    ownOnly: Set<Match<Hook>> | undefined,
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
    let transforms = 0;
    for (const m of hits) {
      const h = m.value;
      if (ownOnly?.has(m) && h.Owner !== user) continue;
      const input = () => filterInput(trigger, uri, m.captures, user);
      if (!this.code.passes(h, input).matched) continue;
      const request = this.render(h, m.captures, trigger, uri, firedAt, user);
      if (!request) continue;
      const e: FiredEvent = {
        hookId: h.Id,
        owner: h.Owner,
        hookType: h.Type,
        persist: h.Persist,
        firedAt: firedAt.toISOString(),
        trigger: info,
        request,
      };
      if (trigger.trace !== undefined) e.trace = trigger.trace;
      if (h.Transform === undefined) events.push(e);
      else {
        transforms++;
        this.transformed.send(h, e, input());
      }
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
    return events.length + transforms;
  }

  /**
   * The dry run: which of `owner`'s hooks would fire for this request and the exact callbacks,
   * without sending. Without a status only the hooks that do not depend on one are judged; the
   * owner's scopes apply as when firing, with the request's user the dry run's `User`.
   */
  async preview(owner: string, trigger: Trigger): Promise<Preview[]> {
    return this.#previewOf(owner, trigger, (phase) => this.indexes[phase].match(trigger.path));
  }

  /**
   * The dry run of a hook not saved (the editor's form), as `preview` judges a saved one of its
   * owner's: the same limits, escaping and transform threads, and nothing of it kept. The hook has
   * passed validation.
   */
  previewDraft(hook: Hook, trigger: Trigger): Promise<Preview[]> {
    const phase = hook.Type === BEFORE_COMPLETION ? 'before' : 'after';
    const index = new MatchIndex<Hook>();
    index.set(hook.Id, storedPattern(hook), hook);
    return this.#previewOf(hook.Owner, trigger, (p) => (p === phase ? index.match(trigger.path) : []));
  }

  async #previewOf(
    owner: string,
    trigger: Trigger,
    matches: (phase: Phase) => Iterable<Match<Hook>>,
  ): Promise<Preview[]> {
    const out: Preview[] = [];
    const now = this.opts.now?.() ?? new Date();
    const uri = this.uriOf(trigger);
    const verdict =
      this.opts.scopes === undefined ? 'in' : await this.opts.scopes.verdict(owner, trigger.path);
    if (verdict === 'out' || (verdict === 'own' && trigger.user !== owner)) return out;
    for (const phase of ['before', 'after'] as const) {
      for (const m of matches(phase)) {
        const h = m.value;
        if (h.Owner !== owner || !methodFires(h, trigger.method)) continue;
        // Without a status, a hook with status lists is listed as needing one (not dropped).
        const needsStatus = phase === 'after' && trigger.statusCode === undefined && hasStatusLists(h);
        if (phase === 'after' && trigger.statusCode !== undefined && !statusFires(h, trigger.statusCode))
          continue;
        const t = phase === 'before' ? { ...trigger, statusCode: undefined } : trigger;
        const request = this.render(h, m.captures, t, uri, now, trigger.user ?? '');
        if (!request) continue;
        const p: Preview = { hook: h, captures: m.captures, request, ...(needsStatus && { needsStatus }) };
        const input = filterInput(t, uri, m.captures, trigger.user ?? '');
        if (h.Filter !== undefined) p.filter = this.code.judge(h, input);
        if (h.Transform !== undefined && p.filter?.matched !== false) {
          p.transform = previewOf(await this.code.transform(h, input, request));
        }
        out.push(p);
      }
    }
    return out;
  }

  private render(
    hook: Hook,
    captures: string[],
    t: Trigger,
    uri: string,
    at: Date,
    user: string,
  ): CallbackRequest | undefined {
    return renderCallback(this.templates, hook, captures, t, uri, at, user, this.opts.onRenderError);
  }

  private indexFor(type: Hook['Type']): DeferredIndex<Hook> {
    return type === BEFORE_COMPLETION ? this.indexes.before : this.indexes.after;
  }
}
