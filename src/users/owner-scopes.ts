import type { ScopeVerdict } from '../engine/index.js';
import type { UserRecord } from '../store/index.js';
import { type CompiledScopes, compileScopes, defaultScopesFor, pathInScopes } from './scopes.js';

/** Where owners' scopes are read from: the store. */
export interface ScopeSource {
  getUser(name: string): Promise<UserRecord | undefined>;
  listUsers(): Promise<UserRecord[]>;
}

/** The owner of no stored user (removed meanwhile): nothing is in scope. */
const NOTHING = compileScopes([]);

/**
 * Every hook owner's scopes, compiled once and cached, for the fire rule "a hook fires only if
 * the request is inside one of its owner's scopes". Checked on matched hooks only, so a proxied
 * request that matches nothing never gets here. The verdict is synchronous, except for an owner
 * not cached yet (a user made by another instance a moment ago). A change to a user, here or (told by the store) elsewhere,
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
   * The fire rule's scope half, for a hook of `owner` that matched a request on `path`: `in` (a
   * path scope holds it), `own` (only if the owner made the request) or `out`. Synchronous when
   * the owner's scopes are cached; an owner whose scopes cannot be read counts as `out`.
   */
  readonly verdict = (owner: string, path: string): ScopeVerdict | Promise<ScopeVerdict> => {
    const s = this.scopesOf(owner);
    if (!(s instanceof Promise)) return decide(s, path);
    return s.then(
      (scopes) => decide(scopes, path),
      () => 'out' as const,
    );
  };
}

function compile(u: UserRecord): CompiledScopes {
  return compileScopes(u.scopes ?? defaultScopesFor(u.name));
}

function decide(s: CompiledScopes, path: string): ScopeVerdict {
  if (pathInScopes(s, path)) return 'in';
  return s.own ? 'own' : 'out';
}
