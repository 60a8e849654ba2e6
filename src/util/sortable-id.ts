import { randomBytes } from 'node:crypto';

/** Crockford's base32: no I, L, O or U, so an Id read aloud or retyped is not misread. */
export const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * `prefix` + 10 characters of millisecond time + `randomChars` random characters (5 bits each),
 * all Crockford base32: unguessable, URL-safe, and sorted by creation time, which is what lets a
 * list page with a plain `Id > after`. Hook and notification endpoint Ids; delivery Ids use the
 * same alphabet and layout, made faster for the firing path (delivery/delivery-id.ts).
 */
export function sortableId(prefix: string, randomChars: number, now: number = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  let rand = '';
  for (const b of randomBytes(randomChars)) rand += CROCKFORD[b & 31];
  return `${prefix}${time}${rand}`;
}
