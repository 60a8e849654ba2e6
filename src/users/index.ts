/**
 * Users and their scopes: what a user's hooks may observe. The public surface:
 * the pure scope rules (scopes.ts), the per-owner cache the engine asks (owner-scopes.ts), the
 * PathPattern check of create/replace (pattern-check.ts) and the start-up migration.
 */

import type { Store } from '../store/index.js';
import { Accounts } from './accounts.js';
import { OwnerScopes } from './owner-scopes.js';
import { pathPatternCheck } from './pattern-check.js';

export { migrateUserScopes } from './migrate-scopes.js';
export { OwnerScopes } from './owner-scopes.js';
export * from './scopes.js';

export interface UserScopes {
  /** The one Accounts of the daemon: its changes drop cached scopes. */
  accounts: Accounts;
  scopes: OwnerScopes;
  checkPattern: (owner: string, pathPattern: string) => Promise<void>;
}

/** Assembles accounts and the scope cache, loaded with every user's scopes. */
export async function userScopes(store: Store): Promise<UserScopes> {
  const accounts = new Accounts(store);
  const scopes = new OwnerScopes(store);
  await scopes.loadAll();
  accounts.onUserChanged((name) => scopes.changed(name));
  return { accounts, scopes, checkPattern: pathPatternCheck(scopes) };
}
export { Accounts } from './accounts.js';
export { mayMakePortalLinks, mayReportForAnyone, parsePermissions, permissionsOf } from './permissions.js';
export { ADMIN_USER } from './scopes.js';
