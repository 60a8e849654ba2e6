import { isValidUserName, newToken, USER_NAME_RULE } from '../auth/index.js';
import { HookdError } from '../errors/index.js';
import { isoTimestamp } from '../hook/index.js';
import type { Store, TokenRecord, UserRecord } from '../store/index.js';
import { parsePermissions } from './permissions.js';
import { ADMIN_USER, defaultScopesFor, parseScopes } from './scopes.js';

/**
 * User and token administration, shared by `hookd user|token …`, the first-start bootstrap, the
 * `/_hookd/users` API and the identity providers (users made on first sight). `addUser` is the one
 * place users are made, so every new user gets the default scopes there.
 */
export class Accounts {
  private readonly listeners: ((name: string) => void)[] = [];

  constructor(private readonly store: Store) {}

  /** Told the name of every user added, removed or given other scopes through this object. */
  onUserChanged(listener: (name: string) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Adds a user with the given scopes, by default `["own"]` (`admin`: `["/"]`). Scopes given by a
   * client are checked and refused (400, naming `Scopes`) when malformed.
   */
  async addUser(name: string, scopes?: unknown, permissions?: unknown): Promise<UserRecord> {
    if (!isValidUserName(name)) {
      throw new HookdError('BAD_REQUEST', `user name "${name}" is invalid: it must be ${USER_NAME_RULE}`);
    }
    const granted = permissions === undefined ? [] : checkedPermissions(permissions);
    const user: UserRecord = {
      name,
      created: isoTimestamp(),
      scopes: scopes === undefined ? [...defaultScopesFor(name)] : checkedScopes(scopes),
      ...(granted.length > 0 && { permissions: granted }),
    };
    if (!(await this.store.addUser(user))) throw new HookdError('CONFLICT', `user "${name}" already exists`);
    this.changed(name);
    return user;
  }

  async getUser(name: string): Promise<UserRecord> {
    const user = await this.store.getUser(name);
    if (!user) throw new HookdError('NOT_FOUND', `no user "${name.slice(0, 64)}"`);
    return { ...user, scopes: user.scopes ?? [...defaultScopesFor(user.name)] };
  }

  /** Replaces a user's scopes (checked; 400 naming `Scopes` when malformed, 404 for no such user). */
  async setScopes(name: string, scopes: unknown): Promise<UserRecord> {
    const list = checkedScopes(scopes);
    if (!(await this.store.setUserScopes(name, list)))
      throw new HookdError('NOT_FOUND', `no user "${name.slice(0, 64)}"`);
    this.changed(name);
    return this.getUser(name);
  }

  /**
   * Replaces a user's permissions (checked; 400 naming `Permissions`, 404 for no such user). The
   * admin has every permission: its list cannot be changed (409).
   */
  async setPermissions(name: string, permissions: unknown): Promise<UserRecord> {
    const list = checkedPermissions(permissions);
    if (name === ADMIN_USER)
      throw new HookdError(
        'CONFLICT',
        'the admin user has every permission, always; its Permissions cannot be changed',
      );
    if (!(await this.store.setUserPermissions(name, list)))
      throw new HookdError('NOT_FOUND', `no user "${name.slice(0, 64)}"`);
    this.changed(name);
    return this.getUser(name);
  }

  /**
   * A JWT's scopes claim (`--identity-jwt-scopes-claim`) replaces the user's stored scopes: written
   * only when they differ, so a user's every request does not write the store. A claim with a
   * malformed entry is refused as a whole (403 naming the entry), never half applied.
   */
  async applyClaimedScopes(name: string, claimed: readonly string[]): Promise<void> {
    const parsed = parseScopes(claimed);
    if (!parsed.ok) {
      throw new HookdError(
        'FORBIDDEN',
        `the scopes claim of your identity token is not a list of scopes, so hookd cannot tell what your hooks may observe: ${parsed.errors.join('; ')}`,
      );
    }
    const stored = (await this.store.getUser(name))?.scopes;
    if (stored && sameList(stored, parsed.scopes)) return;
    if (await this.store.setUserScopes(name, parsed.scopes)) this.changed(name);
  }

  /** Removes the user with its tokens (and, in the store, its hooks). */
  async removeUser(name: string): Promise<void> {
    if (!(await this.store.removeUser(name)))
      throw new HookdError('NOT_FOUND', `no user "${name.slice(0, 64)}"`);
    this.changed(name);
  }

  /**
   * The user a provider identified: returned as stored, or, when it is new and `create` is set,
   * added first (the one place where users are made on first sight, so that the defaults a new
   * user gets apply to them too). Undefined when it is unknown and `create` is off.
   */
  async ensureUser(name: string, create = true): Promise<UserRecord | undefined> {
    const known = await this.store.getUser(name);
    if (known || !create) return known;
    try {
      return await this.addUser(name);
    } catch (err) {
      // Two first requests of the same user at once: the other one added it.
      if (err instanceof HookdError && err.code === 'CONFLICT') return this.store.getUser(name);
      throw err;
    }
  }

  async createToken(user: string, label = ''): Promise<{ record: TokenRecord; token: string }> {
    if (!(await this.store.getUser(user))) {
      throw new HookdError('NOT_FOUND', `no user "${user}"; add it first with: hookd user add ${user}`);
    }
    const t = newToken();
    const record: TokenRecord = { id: t.id, user, hash: t.hash, label, created: isoTimestamp() };
    await this.store.addToken(record);
    return { record, token: t.token };
  }

  private changed(name: string): void {
    for (const l of this.listeners) l(name);
  }
}

function checkedScopes(input: unknown): string[] {
  const r = parseScopes(input);
  if (r.ok) return r.scopes;
  throw new HookdError('VALIDATION_FAILED', `Scopes: ${r.errors.join('; ')}`, {
    errors: r.errors.map((message) => ({ field: 'Scopes', message })),
  });
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function checkedPermissions(input: unknown): string[] {
  const r = parsePermissions(input);
  if (r.ok) return r.permissions;
  throw new HookdError('VALIDATION_FAILED', `Permissions: ${r.errors.join('; ')}`, {
    errors: r.errors.map((message) => ({ field: 'Permissions', message })),
  });
}
