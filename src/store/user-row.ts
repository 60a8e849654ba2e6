import type { UserRecord } from './store.js';

/** A users row of SQLite or PostgreSQL; `scopes` NULL (a user from before scopes) is left out. */
export function userOf(row: Record<string, unknown>): UserRecord {
  const u: UserRecord = { name: row.name as string, created: row.created as string };
  if (typeof row.scopes === 'string') u.scopes = JSON.parse(row.scopes) as string[];
  // NULL (every user from before permissions) or an empty list: none, left out.
  if (typeof row.permissions === 'string') {
    const p = JSON.parse(row.permissions) as string[];
    if (p.length > 0) u.permissions = p;
  }
  return u;
}
