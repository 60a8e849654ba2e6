import { randomFillSync } from 'node:crypto';
import { CROCKFORD } from '../util/index.js';

const POOL_SIZE = 4096;
const RANDOM_CHARS = 16;

// One getrandom call per 256 Ids instead of one per Id: Ids are made on the firing path.
const pool = Buffer.allocUnsafe(POOL_SIZE);
let poolOffset = POOL_SIZE;

let lastTime = -1;
// The Id is assembled in one buffer and turned into a string once: no intermediate strings.
const ID_LENGTH = 4 + 10 + RANDOM_CHARS;
const idBytes = Buffer.from('msg_'.padEnd(ID_LENGTH, '0'), 'latin1');
const ALPHABET = Buffer.from(CROCKFORD, 'latin1');

/**
 * Delivery Ids: `msg_` + 10 characters of millisecond time + 16 random characters (80 bits), all
 * Crockford base32, like hook Ids. Sorting by Id sorts by creation time, which is what lists the
 * delivery log newest first and pages it with a plain `Id < after`; within one millisecond the
 * random part counts up (as in ULID), so Ids made by one process sort in the order they were made.
 * The Id is the Standard Webhooks `webhook-id`, so it stays the same across retries and redeliveries.
 */
export function newDeliveryId(now: number = Date.now()): string {
  if (now === lastTime) {
    // Increment the previous random part; an overflow of all 80 bits just wraps (never in practice).
    for (let i = ID_LENGTH - 1; i >= 14; i--) {
      const digit = (ALPHABET.indexOf(idBytes[i]!) + 1) & 31;
      idBytes[i] = ALPHABET[digit]!;
      if (digit !== 0) break;
    }
  } else {
    let t = now;
    for (let i = 13; i >= 4; i--) {
      idBytes[i] = ALPHABET[t % 32]!;
      t = Math.floor(t / 32);
    }
    if (poolOffset + RANDOM_CHARS > POOL_SIZE) {
      randomFillSync(pool);
      poolOffset = 0;
    }
    // The top bit is left clear so that a millisecond's increments have room before they wrap.
    idBytes[14] = ALPHABET[pool[poolOffset++]! & 15]!;
    for (let i = 15; i < ID_LENGTH; i++) idBytes[i] = ALPHABET[pool[poolOffset++]! & 31]!;
    lastTime = now;
  }
  return idBytes.toString('latin1', 0, ID_LENGTH);
}

/** What a delivery Id in a URL may look like before a store is asked. */
export const DELIVERY_ID_SHAPE = /^msg_[0-9A-Z]{26}$/;
