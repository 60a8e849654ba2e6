/**
 * The ed25519 key pair of a hook's `v1a` signatures (Standard Webhooks' asymmetric scheme),
 * derived from the hook's signing secret with HKDF-SHA256 rather than stored beside it: the pair
 * then rotates with the secret, keeps the secret's grace period, lives wherever the secret lives
 * (memory for `Persist: false` hooks, the shared database in a cluster, where instances already
 * agree on one secret), and needs no migration (docs/DECISIONS.md "Delivery semantics").
 */
import { createPrivateKey, createPublicKey, hkdfSync, type KeyObject } from 'node:crypto';

/** Prefix of a public key as hookd shows it: Standard Webhooks' `whpk_` + base64 of the raw 32 bytes. */
export const PUBLIC_KEY_PREFIX = 'whpk_';

// Fixed label of the derivation: changing it would change every hook's public key.
const INFO = Buffer.from('hookd webhook-signature v1a ed25519');
// PKCS#8 DER header of an ed25519 private key; the 32-byte seed follows it (RFC 8410).
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface Ed25519Pair {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** `whpk_…`: what receivers verify with. */
  publicText: string;
}

/** The pair a secret's bytes stand for; the same bytes always give the same pair. */
export function deriveEd25519(secretBytes: Buffer): Ed25519Pair {
  const seed = Buffer.from(hkdfSync('sha256', secretBytes, Buffer.alloc(0), INFO, 32));
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = createPublicKey(privateKey);
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, publicKey, publicText: PUBLIC_KEY_PREFIX + raw.toString('base64') };
}

/** A `whpk_…` text as a public KeyObject (receivers' side; tests verify with it). */
export function publicKeyFromText(text: string): KeyObject {
  const b64 = text.startsWith(PUBLIC_KEY_PREFIX) ? text.slice(PUBLIC_KEY_PREFIX.length) : text;
  const spkiPrefix = Buffer.from('302a300506032b6570032100', 'hex');
  return createPublicKey({
    key: Buffer.concat([spkiPrefix, Buffer.from(b64, 'base64')]),
    format: 'der',
    type: 'spki',
  });
}
