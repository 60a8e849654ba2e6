/**
 * The store's record "every stored value is sealed under key K" (docs/decisions/0077): with it a
 * start whose current key is K skips the re-sealing walk over every hook, secret and delivery URL.
 * It is sound whoever writes the store: triggers in the schema clear it on any write of a value
 * that is plain or sealed under another key (an older hookd, a daemon that has not read a rotated
 * key file yet, a tool writing plain values), so only a walk that saw no such write sets it.
 */
import type { SubstringFunction } from './secret-codec.js';

export interface SealedMarker {
  /** The key every value is sealed under, when the store knows it. */
  sealedUnder(): Promise<string | undefined>;
  /**
   * Starts a walk that seals everything under `keyId`: the marker is cleared, and from here on a
   * write under another key is noticed. Returns the claim `finishWalk` is given.
   */
  beginWalk(keyId: string): Promise<number>;
  /**
   * After a walk that left nothing plain or under another key: records `keyId` if no other walk
   * began and no value under another key was written since `claim`; true when recorded.
   */
  finishWalk(keyId: string, claim: number): Promise<boolean>;
}

/** The one-row table (both dialects): the key, whether it is recorded, and the claims' counter. */
export const SEALED_MARKER_TABLE = 'secrets_sealed';

/** How many times `needle` occurs in `text`, times the needle's length. */
const occurrences = (text: string, needle: string) =>
  `(length(${text}) - length(replace(${text}, ${needle}, '')))`;

/** Whether `text` starts with `prefix` followed by a value sealed under the marker's `key`. */
const sealedUnderKey = (text: string, prefix = '') =>
  `substr(${text}, 1, length(key) + ${prefix.length + 6}) = '${prefix}hkx1:' || key || ':'`;

/**
 * Conditions on the marker row (its column `key`) that hold when a written row keeps the marker
 * true. They are never looser than the walk: what the walk would re-seal fails them; a few rows
 * the walk leaves as they are fail them too (a hook document with an `@` outside a Callback's
 * credentials), which only costs the next start a walk.
 */
export const KEEPS_MARKER = {
  secret: (secret: string, previous: string) =>
    `${sealedUnderKey(secret)} AND (${previous} IS NULL OR ${sealedUnderKey(previous)})`,
  /** Every sealed value in the document under the key, and no `@` (a plain credential). */
  doc: (doc: string, find: SubstringFunction) =>
    `${find}(${doc}, '@') = 0 AND ${occurrences(doc, "'hkx1:'")} * (length(key) + 6) = ${occurrences(doc, "'hkx1:' || key || ':'")} * 5`,
  /** Sealed under the key, or plain without user info (as `hasUserInfo` tells it). */
  url: (url: string, find: SubstringFunction) => {
    const rest = `substr(${url}, ${find}(${url}, '://') + 3)`;
    const at = `${find}(${rest}, '@')`;
    const before = (c: string) => `(${find}(${rest}, '${c}') = 0 OR ${at} < ${find}(${rest}, '${c}'))`;
    const userInfo = `(${find}(${url}, '://') > 0 AND ${at} > 0 AND ${before('/')} AND ${before('?')} AND ${before('#')})`;
    return `(${sealedUnderKey(url, 'sealed:')} OR (${url} NOT LIKE 'sealed:%' AND NOT ${userInfo}))`;
  },
};

/** The update a trigger runs when a written row may break the marker. */
export const CLEAR_MARKER = `UPDATE ${SEALED_MARKER_TABLE} SET key = NULL, sealed = 0, gen = gen + 1 WHERE key IS NOT NULL`;
