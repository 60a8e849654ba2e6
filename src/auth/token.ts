import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API tokens look like `hkd_<id>_<secret>`: a 12-hex-character public id that finds the record,
 * and 256 random bits of secret, of which only the SHA-256 is stored. A fast hash is right here:
 * the secret is random, not a password, so there is nothing to brute-force.
 */
const TOKEN_SHAPE = /^hkd_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export interface NewToken {
  id: string;
  /** The whole token, shown once to whoever created it. */
  token: string;
  hash: string;
}

export function newToken(): NewToken {
  const id = randomBytes(6).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { id, token: `hkd_${id}_${secret}`, hash: hashSecret(secret) };
}

export function parseToken(token: string): { id: string; secret: string } | undefined {
  const m = TOKEN_SHAPE.exec(token);
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  return hashMatches(secret, Buffer.from(storedHash, 'hex'));
}

/** Constant-time comparison of a presented secret with a stored hash already decoded. */
export function hashMatches(secret: string, storedHash: Buffer): boolean {
  const a = createHash('sha256').update(secret).digest();
  return a.length === storedHash.length && timingSafeEqual(a, storedHash);
}
