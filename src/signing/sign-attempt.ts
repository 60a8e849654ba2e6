/**
 * The `webhook-signature` value of one attempt for a hook's schemes: per scheme the current
 * key's signature, then the previous key's while a rotation's grace period lasts, space-separated
 * (Standard Webhooks lets receivers accept any one of them).
 */
import { createHmac, sign as ed25519Sign, type KeyObject } from 'node:crypto';
import { deriveEd25519, type Ed25519Pair } from './ed25519-key.js';
import type { SignatureScheme } from './schemes.js';
import { type SigningKeys, sign as signV1 } from './standard-webhooks.js';

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

/**
 * The `webhook-signature` value in hookd's default scheme (`v1`): the current key's signature,
 * followed by the previous key's while it is still valid at `now`, so receivers can switch
 * secrets at their pace.
 */
export function signatureHeader(...attempt: AttemptToSign): string {
  return signatureFor(undefined, ...attempt);
}

/** What one attempt's signature covers, and when it is made (which decides the previous key). */
type AttemptToSign = [keys: SigningKeys, id: string, timestamp: string, body: string, now: number];

/**
 * The `webhook-signature` value for `schemes` (undefined: `v1` only, hookd's default); '' when
 * they name neither `v1` nor `v1a` (the header is then not sent).
 */
export function signatureFor(
  schemes: readonly SignatureScheme[] | undefined,
  keys: SigningKeys,
  id: string,
  timestamp: string,
  body: string,
  now: number,
): string {
  const withPrevious = keys.previous !== undefined && now < keys.previousValidUntil;
  // hookd's default, one v1 signature: no list, no signed-content buffer, so the common case pays
  // for nothing it does not use.
  if (schemes === undefined && !withPrevious) return signV1(keys.current, id, timestamp, body);
  // Several signatures of one attempt sign the same content: it is built once for all of them.
  const content = Buffer.from(`${id}.${timestamp}.${body}`);
  let out = '';
  for (const s of schemes ?? V1_ONLY) {
    // The receivers' own formats go in headers of their own (receiver-formats.ts).
    if (s !== 'v1' && s !== 'v1a') continue;
    out += `${out === '' ? '' : ' '}${signContent(s, keys.current, content)}`;
    if (withPrevious) out += ` ${signContent(s, keys.previous!, content)}`;
  }
  return out;
}

const V1_ONLY: readonly SignatureScheme[] = ['v1'];

/** One signature of `${id}.${timestamp}.${body}` as bytes, the same as `signV1` or `signV1a` of its parts. */
function signContent(scheme: 'v1' | 'v1a', key: KeyObject, content: Buffer): string {
  if (scheme === 'v1') return `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
  return `v1a,${ed25519Sign(null, content, ed25519Of(key).privateKey).toString('base64')}`;
}
