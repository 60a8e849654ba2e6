import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import { ADMIN_USER, defaultScopesFor } from './scopes.js';

/**
 * Users stored before scopes existed (an older data dir or database) have none: each gets the
 * default, `admin` `["/"]` (it keeps seeing everything) and everyone else `["own"]` (their hooks
 * now fire only for their own requests until an admin grants paths). Said at start-up in one log
 * line naming the users whose hooks now fire less (docs/DECISIONS.md "Scopes"). Runs under the
 * start-up lock of a cluster, so one instance does it. Returns those users' names.
 */
export async function migrateUserScopes(store: Store, log: Logger): Promise<string[]> {
  const missing = (await store.listUsers()).filter((u) => u.scopes === undefined);
  if (missing.length === 0) return [];
  for (const u of missing) await store.setUserScopes(u.name, [...defaultScopesFor(u.name)]);
  const narrowed: string[] = [];
  for (const u of missing) {
    if (u.name === ADMIN_USER) continue;
    // Only owners of hooks see a difference.
    if ((await store.listHooks(u.name, { limit: 1 })).length > 0) narrowed.push(u.name);
  }
  log.warn(
    { users: narrowed, scopes: ['own'], migrated: missing.length },
    narrowed.length > 0
      ? `scopes: users from before scopes were given ["own"]; the hooks of ${narrowed.join(', ')} now fire only for their own requests until an admin grants paths (hookctl users grant NAME PATH)`
      : 'scopes: users from before scopes were given the default scopes (admin ["/"], others ["own"]); none of them owns a hook',
  );
  return narrowed;
}
