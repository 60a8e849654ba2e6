/**
 * The `webhook-signature` value of one attempt for a hook's schemes: per scheme the current
 * key's signature, then the previous key's while a rotation's grace period lasts, space-separated
 * (Standard Webhooks lets receivers accept any one of them).
 */
import { sign as ed25519Sign, type KeyObject } from 'node:crypto';
import { type SigningKeys, sign as signV1 } from '../delivery/signing.js';
import { deriveEd25519, type Ed25519Pair } from './ed25519-key.js';
import type { SignatureScheme } from './schemes.js';

// Derived once per HMAC key object: the secrets cache keeps one per hook until it rotates.
const pairs = new WeakMap<KeyObject, Ed25519Pair>();

/** The ed25519 pair of a hook's HMAC key (the secret's bytes). */
export function ed25519Of(hmacKey: KeyObject): Ed25519Pair {
  let p = pairs.get(hmacKey);
  if (p === undefined) {
    p = deriveEd25519(hmacKey.export());
    pairs.set(hmacKey, p);
  }
  return p;
}

/** One `v1a,` signature of `${id}.${timestamp}.${body}`. */
export function signV1a(hmacKey: KeyObject, id: string, timestamp: string, body: string): string {
  const sig = ed25519Sign(null, Buffer.from(`${id}.${timestamp}.${body}`), ed25519Of(hmacKey).privateKey);
  return `v1a,${sig.toString('base64')}`;
}

function signWith(scheme: SignatureScheme, key: KeyObject, id: string, ts: string, body: string): string {
  return scheme === 'v1' ? signV1(key, id, ts, body) : signV1a(key, id, ts, body);
}

/**
 * The header value for `schemes` (undefined: `v1` only, hookd's default, signed exactly as
 * before this room existed).
 */
export function signatureFor(
  schemes: readonly SignatureScheme[] | undefined,
  keys: SigningKeys,
  id: string,
  timestamp: string,
  body: string,
  now: number,
): string {
  const list = schemes ?? ['v1'];
  const withPrevious = keys.previous !== undefined && now < keys.previousValidUntil;
  let out = '';
  for (const s of list) {
    out += `${out === '' ? '' : ' '}${signWith(s, keys.current, id, timestamp, body)}`;
    if (withPrevious) out += ` ${signWith(s, keys.previous!, id, timestamp, body)}`;
  }
  return out;
}
