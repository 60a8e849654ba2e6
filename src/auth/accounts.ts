import { HookdError } from '../errors/catalog.js';
import { isoTimestamp } from '../hook/hook.js';
import type { Store, TokenRecord, UserRecord } from '../store/store.js';
import { newToken } from './token.js';
import { isValidUserName, USER_NAME_RULE } from './user-name.js';

/** User and token administration, shared by `hookd user|token …` and the first-start bootstrap. */
export class Accounts {
  constructor(private readonly store: Store) {}

  async addUser(name: string): Promise<UserRecord> {
    if (!isValidUserName(name)) {
      throw new HookdError('BAD_REQUEST', `user name "${name}" is invalid: it must be ${USER_NAME_RULE}`);
    }
    const user = { name, created: isoTimestamp() };
    if (!(await this.store.addUser(user))) throw new HookdError('CONFLICT', `user "${name}" already exists`);
    return user;
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
}
