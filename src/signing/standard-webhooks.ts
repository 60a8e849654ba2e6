/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): a per-hook secret
 * `whsec_` + base64 of 32 random bytes; each callback carries `webhook-id`, `webhook-timestamp`
 * (unix seconds) and `webhook-signature`: `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`,
 * a space-separated list when a rotated-out secret is still in its grace period.
 */
import { createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** A fresh signing secret. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * The HMAC key a secret stands for (the bytes of its base64 part), as a KeyObject: imported once,
 * it makes each signature cheaper than a raw key would.
 */
export function secretKey(secret: string): KeyObject {
  const b64 = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return createSecretKey(Buffer.from(b64, 'base64'));
}

/** The decoded keys of one hook: what signing needs, kept in memory per hook. */
export interface SigningKeys {
  current: KeyObject;
  /** The replaced key during a rotation's grace period. */
  previous: KeyObject | undefined;
  /** Epoch ms after which `previous` is no longer used. */
  previousValidUntil: number;
}

/** One `v1,` signature. */
export function sign(key: KeyObject, id: string, timestamp: string, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')}`;
}
