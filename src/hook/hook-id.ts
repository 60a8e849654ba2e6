import { sortableId } from '../util/index.js';

/**
 * Hook Ids: `hk_` + 10 characters of millisecond time + 20 random characters (100 bits), all
 * Crockford base32. Unguessable, URL-safe, and sortable by creation time, which is what lets
 * `GET /hooks?after=ID` page with a plain `Id > after`.
 */
export function newHookId(now: number = Date.now()): string {
  return sortableId('hk_', 20, now);
}

/** What an Id in a URL may look like before the store is asked (keeps junk out of logs and SQL). */
export const HOOK_ID_SHAPE = /^[A-Za-z0-9_-]{1,64}$/;
