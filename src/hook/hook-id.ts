import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * Hook Ids: `hk_` + 10 characters of millisecond time + 20 random characters (100 bits), all
 * Crockford base32. Unguessable, URL-safe, and sortable by creation time, which is what lets
 * `GET /hooks?after=ID` page with a plain `Id > after`.
 */
export function newHookId(now: number = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(20);
  let rand = '';
  for (const b of bytes) rand += CROCKFORD[b & 31];
  return `hk_${time}${rand}`;
}

/** What an Id in a URL may look like before the store is asked (keeps junk out of logs and SQL). */
export const HOOK_ID_SHAPE = /^[A-Za-z0-9_-]{1,64}$/;
