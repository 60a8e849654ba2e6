import { createPrivateKey, createPublicKey, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
export const PUBLIC_KEY_PREFIX = 'whpk_';

/** One secret as the verifier uses it: the keys it stands for, made once per text. */
export interface VerifyKey {
  /** v1's HMAC key (the bytes of the base64 after `whsec_`); absent for a public key. */
  hmac?: KeyObject;
  /** The github and template formats' HMAC key: the secret's text itself, `whsec_` included. */
  text?: KeyObject;
  /** v1a's ed25519 public key: given as `whpk_…`, or derived from the secret as hookd derives it. */
  ed25519: KeyObject;
}

// hookd derives a hook's v1a pair from its secret with HKDF-SHA256 under this label.
const V1A_INFO = Buffer.from('hookd webhook-signature v1a ed25519');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const cache = new Map<string, VerifyKey>();

/** The keys of a `whsec_…` secret or a `whpk_…` public key; throws a TypeError naming a bad one. */
export function keyOf(secret: string): VerifyKey {
  let k = cache.get(secret);
  if (k !== undefined) return k;
  if (secret.startsWith(PUBLIC_KEY_PREFIX)) {
    const raw = Buffer.from(secret.slice(PUBLIC_KEY_PREFIX.length), 'base64');
    if (raw.length !== 32) throw new TypeError('secret: a whpk_ public key holds 32 bytes in base64');
    k = { ed25519: createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' }) };
  } else {
    const b64 = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
    const bytes = Buffer.from(b64, 'base64');
    if (bytes.length === 0) throw new TypeError('secret: must be the whsec_… text or a whpk_… public key');
    const seed = Buffer.from(hkdfSync('sha256', bytes, Buffer.alloc(0), V1A_INFO, 32));
    const priv = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    k = {
      hmac: createSecretKey(bytes),
      text: createSecretKey(Buffer.from(secret)),
      ed25519: createPublicKey(priv),
    };
  }
  if (cache.size > 64) cache.clear();
  cache.set(secret, k);
  return k;
}
