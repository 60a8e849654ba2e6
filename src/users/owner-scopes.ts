import type { UserRecord } from '../store/store.js';
import { type CompiledScopes, compileScopes, defaultScopesFor, pathInScopes } from './scopes.js';

/** Where owners' scopes are read from: the store. */
export interface ScopeSource {
  getUser(name: string): Promise<UserRecord | undefined>;
  listUsers(): Promise<UserRecord[]>;
}

/** What the fire rule needs of a triggering request. */
export interface ScopedRequest {
  /** The path, without the query string. */
  path: string;
  /** The user who made the request, resolved lazily (absent: no identity provider). */
  requestUser?: () => Promise<string | undefined>;
}

/** The owner of no stored user (removed meanwhile): nothing is in scope. */
const NOTHING = compileScopes([]);

/**
 * Every hook owner's scopes, compiled once and cached, for the fire rule "a hook fires only if
 * the request is inside one of its owner's scopes". Checked on matched hooks only, so a proxied
 * request that matches nothing never gets here. A path scope is a synchronous verdict; `own`
 * needs the request's user and so a promise, as does an owner not cached yet (a user made by
 * another instance a moment ago). A change to a user, here or (told by the store) elsewhere,
 * drops that user's entry; a fetch that was under way when the change came is not cached.
 */
export class OwnerScopes {
  private readonly cache = new Map<string, CompiledScopes>();
  private readonly loading = new Map<string, Promise<CompiledScopes>>();
  /** Bumped by every change: a fetch started before it must not fill the cache. */
  private epoch = 0;

  constructor(private readonly source: ScopeSource) {}

  /** Fills the cache with every user (start-up, or after changes may have been missed). */
  async loadAll(): Promise<void> {
    const epoch = ++this.epoch;
    const users = await this.source.listUsers();
    if (epoch !== this.epoch) return;
    this.cache.clear();
    for (const u of users) this.cache.set(u.name, compile(u));
  }

  /** A user was added, removed or given other scopes. */
  changed(name: string): void {
    this.epoch++;
    this.cache.delete(name);
    this.loading.delete(name);
  }

  /** Everything may have changed (another process wrote the store). */
  clear(): void {
    this.epoch++;
    this.cache.clear();
    this.loading.clear();
  }

  /** The owner's compiled scopes, from the cache when it has them. */
  scopesOf(owner: string): CompiledScopes | Promise<CompiledScopes> {
    const hit = this.cache.get(owner);
    if (hit !== undefined) return hit;
    let p = this.loading.get(owner);
    if (p === undefined) {
      const epoch = this.epoch;
      p = this.source.getUser(owner).then(
        (u) => {
          const c = u ? compile(u) : NOTHING;
          if (epoch === this.epoch) this.cache.set(owner, c);
          if (this.loading.get(owner) === p) this.loading.delete(owner);
          return c;
        },
        (err: unknown) => {
          if (this.loading.get(owner) === p) this.loading.delete(owner);
          throw err;
        },
      );
      this.loading.set(owner, p);
    }
    return p;
  }

  /**
   * The fire rule's scope half: whether `owner` may observe this request. A boolean when the path
   * decides; a promise when the request's user must be known (`own`) or the owner looked up.
   * A request user that cannot be resolved counts as anonymous (never "allow").
   */
  readonly admits = (owner: string, request: ScopedRequest): boolean | Promise<boolean> => {
    const s = this.scopesOf(owner);
    if (!(s instanceof Promise)) return decide(s, owner, request);
    return s.then(
      (scopes) => decide(scopes, owner, request),
      () => false,
    );
  };
}

function compile(u: UserRecord): CompiledScopes {
  return compileScopes(u.scopes ?? defaultScopesFor(u.name));
}

function decide(s: CompiledScopes, owner: string, request: ScopedRequest): boolean | Promise<boolean> {
  if (pathInScopes(s, request.path)) return true;
  if (!s.own || request.requestUser === undefined) return false;
  return request.requestUser().then(
    (user) => user === owner,
    () => false,
  );
}
