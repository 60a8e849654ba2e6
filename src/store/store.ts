import type { Hook } from '../hook/index.js';
import type { HookSecretRecord } from './delivery-store.js';

/**
 * The storage interface. Every backend (memory, SQLite, PostgreSQL) implements it and passes the
 * same contract suite (test/store/store-contract.ts). Methods are async so that a networked
 * backend fits behind the same shape as the embedded one.
 */

export interface UserRecord {
  name: string;
  created: string;
  /**
   * What the user's hooks may observe: path patterns and/or `own` (src/users/scopes.ts). Absent
   * for a user stored before scopes existed, until the daemon's start-up gives it the default
   * (docs/DECISIONS.md "Scopes").
   */
  scopes?: string[];
  /**
   * What the admin granted beyond owning hooks: `report` lets the user's tokens report
   * requests made by anyone (a service's reporter). Absent or empty: none.
   */
  permissions?: string[];
}

export interface TokenRecord {
  /** Public identifier, part of the token text; safe to show and log. */
  id: string;
  user: string;
  /** SHA-256 of the secret part, hex. The secret itself is never stored. */
  hash: string;
  label: string;
  created: string;
  /**
   * When it last authenticated a request (ISO 8601), to within a minute; absent: never since
   * hookd recorded it.
   */
  lastUsed?: string;
}

export interface PageRequest {
  /** Hooks with an Id greater than this one (Ids sort by creation time). */
  after?: string;
  limit?: number;
}

export interface HookStore {
  /**
   * Insert or replace, atomically: a crash leaves the old or the new version, never half of one.
   * `firstSecret` (a new hook's signing secret) is written in the same transaction, into the
   * secrets of the hook's delivery store: a hook that is refused leaves no secret behind.
   */
  putHook(hook: Hook, firstSecret?: HookSecretRecord): Promise<void>;
  deleteHook(id: string): Promise<boolean>;
  getHook(id: string): Promise<Hook | undefined>;
  /**
   * The owner's hook with this `Name`. Names are unique per owner within a store
   * (an index where the backend has one); putHook refuses a duplicate with CONFLICT.
   */
  getHookByName(owner: string, name: string): Promise<Hook | undefined>;
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
  /** Replaces the user's scopes; false when there is no such user. */
  setUserScopes(name: string, scopes: string[]): Promise<boolean>;
  /** Replaces the user's permissions (`["report"]` or `[]`); false when there is no such user. */
  setUserPermissions(name: string, permissions: string[]): Promise<boolean>;
  addToken(token: TokenRecord): Promise<void>;
  getToken(id: string): Promise<TokenRecord | undefined>;
  listTokens(user?: string): Promise<TokenRecord[]>;
  revokeToken(id: string): Promise<boolean>;
  /** Records that a token was used (cheap, no read); a no-op for a token that is gone. */
  touchToken(id: string, at: string): Promise<void>;
  /**
   * A number that moves whenever a token or user may have changed since it was last read, here or
   * through another connection, read synchronously and cheaply; a token's record read earlier
   * stays right while it has not moved. Absent where the store cannot tell at once (PostgreSQL,
   * whose other instances announce changes asynchronously): credentials are then read every time.
   */
  credentialStamp?(): number;
}

/** Told of hook changes committed by other processes or instances on a shared store. */
export interface HookChangeWatcher {
  /** These hooks changed: `saved` holds their current versions, `deleted` the Ids now gone. */
  changed(saved: Hook[], deleted: string[]): void;
  /** Notifications may have been lost (the connection dropped and is back): reload every hook. */
  resync(): void | Promise<void>;
  /** A hook's signing secret was created, rotated or removed (cached keys must be dropped). */
  secretChanged?(hookId: string): void;
  /** A user was added, removed or given other scopes (cached scopes must be dropped). */
  userChanged?(name: string): void;
  /** Fetching the changed hooks failed (the next change or resync tries again). */
  failed?(err: unknown): void;
}

/**
 * Told of changes that other processes made to the store: a shared store reports each one
 * (HookChangeWatcher), a store file written beside the daemon only that something changed.
 */
export interface ChangeFollower extends HookChangeWatcher {
  /** Another process wrote the store (`hookd user remove` next to a running daemon): reload. */
  changedElsewhere(): void;
}

/**
 * What the processes using one store agree on. Every store has one, so callers never ask whether
 * it can: a store of one process (memory, SQLite) runs exclusive sections at once and only
 * watches its file; a store shared by instances (PostgreSQL) takes turns through the database
 * and announces every committed change (coordination.ts).
 */
export interface Coordination {
  /** True when other instances share the store and change its hooks and deliveries too. */
  readonly shared: boolean;
  /**
   * Runs `fn` while no other process runs an `exclusively` section on the same store, so that
   * instances starting together take turns (the admin bootstrap).
   */
  exclusively<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Follows what other processes commit to the store until the returned function is called.
   * Resolves once it is following.
   */
  followChanges(follower: ChangeFollower): Promise<() => void>;
}

export interface Store extends HookStore, UserStore {
  readonly kind: string;
  readonly coordination: Coordination;
  close(): Promise<void>;
}
