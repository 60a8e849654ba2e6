import type { Hook } from '../../hook/index.js';
import { ALONE } from '../coordination.js';
import type { DeliveryStore, HookSecretRecord } from '../delivery-store.js';
import { nameConflict } from '../name-conflict.js';
import type { Coordination, PageRequest, Store, TokenRecord, UserRecord } from '../store.js';

/**
 * Keeps everything in process memory. Holds `Persist: false` hooks beside a durable store, and is
 * the reference implementation the contract suite is written against.
 */
export class MemoryStore implements Store {
  readonly kind = 'memory';
  readonly coordination: Coordination = ALONE;
  private readonly hooks = new Map<string, Hook>();
  private readonly users = new Map<string, UserRecord>();
  private readonly tokens = new Map<string, TokenRecord>();
  private credentialChanges = 0;

  /** `owner NUL name` → Id: the unique index of names. */
  private readonly names = new Map<string, string>();

  /**
   * @param secrets where a new hook's first secret goes (the delivery store of these hooks); a
   *   store without one keeps such secrets nowhere.
   */
  constructor(private readonly secrets?: Pick<DeliveryStore, 'putSecret'>) {}

  async putHook(hook: Hook, firstSecret?: HookSecretRecord): Promise<void> {
    const key = hook.Name === undefined ? undefined : `${hook.Owner}\0${hook.Name}`;
    const holder = key === undefined ? undefined : this.names.get(key);
    if (holder !== undefined && holder !== hook.Id) throw nameConflict(hook.Name!, holder);
    this.forgetName(hook.Id);
    if (key !== undefined) this.names.set(key, hook.Id);
    this.hooks.set(hook.Id, structuredClone(hook));
    // After the only check that can refuse the hook, and a memory store's write cannot fail: the
    // hook and its secret are both written or neither is.
    if (firstSecret !== undefined) await this.secrets?.putSecret(firstSecret);
  }

  async deleteHook(id: string): Promise<boolean> {
    this.forgetName(id);
    return this.hooks.delete(id);
  }

  async getHookByName(owner: string, name: string): Promise<Hook | undefined> {
    const id = this.names.get(`${owner}\0${name}`);
    return id === undefined ? undefined : this.getHook(id);
  }

  private forgetName(id: string): void {
    const old = this.hooks.get(id);
    if (old?.Name !== undefined) this.names.delete(`${old.Owner}\0${old.Name}`);
  }

  async getHook(id: string): Promise<Hook | undefined> {
    const h = this.hooks.get(id);
    return h && structuredClone(h);
  }

  async listHooks(owner: string, page: PageRequest = {}): Promise<Hook[]> {
    const out: Hook[] = [];
    for (const h of this.hooks.values()) {
      if (h.Owner === owner && (page.after === undefined || h.Id > page.after)) out.push(h);
    }
    out.sort((a, b) => (a.Id < b.Id ? -1 : a.Id > b.Id ? 1 : 0));
    return (page.limit === undefined ? out : out.slice(0, page.limit)).map((h) => structuredClone(h));
  }

  async allHooks(): Promise<Hook[]> {
    return [...this.hooks.values()].map((h) => structuredClone(h));
  }

  /** Moves with every change of a token or user: nothing else writes this store. */
  credentialStamp(): number {
    return this.credentialChanges;
  }

  async addUser(user: UserRecord): Promise<boolean> {
    if (this.users.has(user.name)) return false;
    this.users.set(user.name, copyUser(user));
    this.credentialChanges++;
    return true;
  }

  async getUser(name: string): Promise<UserRecord | undefined> {
    const u = this.users.get(name);
    return u && copyUser(u);
  }

  async setUserScopes(name: string, scopes: string[]): Promise<boolean> {
    const u = this.users.get(name);
    if (!u) return false;
    u.scopes = [...scopes];
    this.credentialChanges++;
    return true;
  }

  async setUserPermissions(name: string, permissions: string[]): Promise<boolean> {
    const u = this.users.get(name);
    if (!u) return false;
    if (permissions.length > 0) u.permissions = [...permissions];
    else delete u.permissions;
    this.credentialChanges++;
    return true;
  }

  async listUsers(): Promise<UserRecord[]> {
    // Code-unit order, as SQLite's BINARY collation sorts.
    return [...this.users.values()]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map(copyUser);
  }

  async removeUser(name: string): Promise<boolean> {
    if (!this.users.delete(name)) return false;
    this.credentialChanges++;
    for (const [id, t] of this.tokens) if (t.user === name) this.tokens.delete(id);
    for (const [id, h] of this.hooks)
      if (h.Owner === name) {
        this.forgetName(id);
        this.hooks.delete(id);
      }
    return true;
  }

  async addToken(token: TokenRecord): Promise<void> {
    if (!this.users.has(token.user)) throw new Error(`no such user: ${token.user}`);
    this.tokens.set(token.id, { ...token });
    this.credentialChanges++;
  }

  async getToken(id: string): Promise<TokenRecord | undefined> {
    const t = this.tokens.get(id);
    return t && { ...t };
  }

  async listTokens(user?: string): Promise<TokenRecord[]> {
    return [...this.tokens.values()]
      .filter((t) => user === undefined || t.user === user)
      .sort((a, b) => (a.created === b.created ? (a.id < b.id ? -1 : 1) : a.created < b.created ? -1 : 1))
      .map((t) => ({ ...t }));
  }

  async revokeToken(id: string): Promise<boolean> {
    this.credentialChanges++;
    return this.tokens.delete(id);
  }

  async touchToken(id: string, at: string): Promise<void> {
    const t = this.tokens.get(id);
    if (t) t.lastUsed = at;
  }

  async close(): Promise<void> {}
}

function copyUser(u: UserRecord): UserRecord {
  const { scopes, permissions, ...rest } = u;
  return {
    ...rest,
    ...(scopes !== undefined && { scopes: [...scopes] }),
    ...(permissions !== undefined && permissions.length > 0 && { permissions: [...permissions] }),
  };
}
