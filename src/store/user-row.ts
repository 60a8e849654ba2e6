import type { UserRecord } from './store.js';

/** A users row of SQLite or PostgreSQL; `scopes` NULL (a user from before scopes) is left out. */
export function userOf(row: Record<string, unknown>): UserRecord {
  const u: UserRecord = { name: row.name as string, created: row.created as string };
  if (typeof row.scopes === 'string') u.scopes = JSON.parse(row.scopes) as string[];
  return u;
}
