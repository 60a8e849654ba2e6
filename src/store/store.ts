import type { Hook } from '../hook/hook.js';

/**
 * The storage interface. Every backend (memory, SQLite, PostgreSQL) implements it and passes the
 * same contract suite (test/store/store-contract.ts). Methods are async so that a networked
 * backend fits behind the same shape as the embedded one.
 */

export interface UserRecord {
  name: string;
  created: string;
}

export interface TokenRecord {
  /** Public identifier, part of the token text; safe to show and log. */
  id: string;
  user: string;
  /** SHA-256 of the secret part, hex. The secret itself is never stored. */
  hash: string;
  label: string;
  created: string;
}

export interface PageRequest {
  /** Hooks with an Id greater than this one (Ids sort by creation time). */
  after?: string;
  limit?: number;
}

export interface HookStore {
  /** Insert or replace, atomically: a crash leaves the old or the new version, never half of one. */
  putHook(hook: Hook): Promise<void>;
  deleteHook(id: string): Promise<boolean>;
  getHook(id: string): Promise<Hook | undefined>;
  /** The owner's hooks ordered by Id. */
  listHooks(owner: string, page?: PageRequest): Promise<Hook[]>;
  /** Every hook of every user, for building the match index at start. */
  allHooks(): Promise<Hook[]>;
}

export interface UserStore {
  addUser(user: UserRecord): Promise<boolean>;
  getUser(name: string): Promise<UserRecord | undefined>;
  listUsers(): Promise<UserRecord[]>;
  /** Removes the user with their tokens and hooks. */
  removeUser(name: string): Promise<boolean>;
  addToken(token: TokenRecord): Promise<void>;
  getToken(id: string): Promise<TokenRecord | undefined>;
  listTokens(user?: string): Promise<TokenRecord[]>;
  revokeToken(id: string): Promise<boolean>;
}

export interface Store extends HookStore, UserStore {
  readonly kind: string;
  /**
   * Calls `onChange` when another process changed the store (`hookd user remove` next to a running
   * daemon, or another instance on a shared database), so the daemon can resync its hooks.
   * Returns a function that stops watching.
   */
  watchExternalChanges?(onChange: () => void): () => void;
  close(): Promise<void>;
}
