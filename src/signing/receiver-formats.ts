/**
 * Signatures in a receiver's own format, for consumers that already verify another provider's
 * webhooks and cannot be changed: `github` (`X-Hub-Signature-256: sha256=<hex>`, as GitHub's
 * documentation describes it) and templates. Both are keyed with the secret's text exactly as
 * `GET /hooks/{id}/secret` shows it (`whsec_` prefix included), since that text is what a user
 * pastes into the consumer's configuration. Each header carries one signature, the current
 * secret's: unlike `webhook-signature` it has no list for a rotated-out secret's.
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { GITHUB_HEADER, type SignatureScheme } from './schemes.js';
import { SECRET_PREFIX, type SigningKeys } from './standard-webhooks.js';

// Made once per hook key: the secrets cache keeps one key object per hook until it rotates.
const textKeys = new WeakMap<KeyObject, KeyObject>();

/**
 * The HMAC key of a secret's text. The text is `whsec_` + base64 of the key's bytes (how hookd
 * makes every secret), so it is rebuilt from the key rather than kept beside it.
 */
export function textKeyOf(key: KeyObject): KeyObject {
  let k = textKeys.get(key);
  if (k === undefined) {
    k = createSecretKey(Buffer.from(SECRET_PREFIX + key.export().toString('base64')));
    textKeys.set(key, k);
  }
  return k;
}

/**
 * The receiver-format headers of one attempt, `[name, value, …]`; undefined when the schemes ask
 * for none (hookd's default, the hot path, allocates nothing).
 */
export function receiverSignatures(
  schemes: readonly SignatureScheme[] | undefined,
  keys: SigningKeys,
  id: string,
  timestamp: string,
  body: string,
): string[] | undefined {
  if (schemes === undefined) return undefined;
  let out: string[] | undefined;
  for (const s of schemes) {
    if (s === 'v1' || s === 'v1a') continue;
    const key = textKeyOf(keys.current);
    out ??= [];
    if (s === 'github') {
      out.push(GITHUB_HEADER, `sha256=${createHmac('sha256', key).update(body).digest('hex')}`);
      continue;
    }
    const signed = (s.Signed ?? '{body}').replace(/\{(id|timestamp|body)\}/g, (_m, n: string) =>
      n === 'id' ? id : n === 'timestamp' ? timestamp : body,
    );
    const mac = createHmac('sha256', key).update(signed).digest();
    const value = s.Value.replace(
      /\{(hmac_sha256_hex|hmac_sha256_base64|timestamp|id)\}/g,
      (_m, n: string) =>
        n === 'hmac_sha256_hex'
          ? mac.toString('hex')
          : n === 'hmac_sha256_base64'
            ? mac.toString('base64')
            : n === 'timestamp'
              ? timestamp
              : id,
    );
    out.push(s.Header, value);
  }
  return out;
}
