import { createHash, type KeyObject } from 'node:crypto';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { onDemand } from '../util/index.js';
import type { IdentityProvider, IdentityRequest, IdentityResult } from './provider.js';
import { bearerOf } from './provider.js';

/** Loaded when a JWT provider is configured, not by every daemon. */
const jose = onDemand<typeof import('jose')>('jose');

/**
 * Asymmetric signatures only. `none` and the HMAC family are never accepted: an HS256 token
 * "signed" with the public key as its secret must not pass (the classic key-confusion attack).
 */
export const JWT_ALGORITHMS: readonly string[] = Object.freeze([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
]);

/** Leeway for `exp` and `nbf` against clock skew between the token issuer and hookd: 30 s. */
export const JWT_CLOCK_TOLERANCE_S = 30;
/** A key id not in the cached JWKS refetches it, at most once per this long. */
export const JWKS_COOLDOWN_MS = 30_000;
/** The cached JWKS is refetched after this long even when every key id is known. */
export const JWKS_MAX_AGE_MS = 10 * 60_000;
/** How long a JWKS fetch may take before the token counts as "provider unavailable". */
export const JWKS_TIMEOUT_MS = 5_000;
/**
 * A verified token is remembered this long at most (and never past its `exp`): a signature check
 * costs about 100 µs of CPU (ES256), and a client sends the same token with every request.
 */
export const VERIFIED_TTL_MS = 60_000;
/** Verified tokens remembered at most; the oldest goes first. */
export const VERIFIED_ENTRIES = 10_000;

export interface JwtProviderOptions {
  /** The identity provider's JWKS URL, or a public key (one of the two). */
  jwksUrl?: string;
  key?: KeyObject;
  issuer?: string;
  audience?: string;
  /** The claim that names the user (default `sub`). */
  userClaim?: string;
  /** The claim holding the user's scopes: an array of strings, or one space-separated string. */
  scopesClaim?: string;
  /** Tests only: the JWKS refetch cooldown (default {@link JWKS_COOLDOWN_MS}). */
  cooldownMs?: number;
  now?: () => number;
}

// Thrown by jose's remote key set when the JWKS could not be fetched or parsed (a timeout, a
// non-200 answer, a body that is no key set): nothing is known about the token's validity.
const OUTAGE_CODES = new Set(['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID', 'ERR_JOSE_GENERIC']);

/**
 * The identity provider could not be asked (its JWKS unreachable or broken). Only this is
 * "unavailable" (503): everything else that fails a token — a key of another type, a malformed
 * key, an algorithm not allowed, a bad signature — is a refusal (401). Deciding by where the
 * error arose, not by its class: WebCrypto's errors for a wrong key type carry no `ERR_JOSE_*`
 * code, and their shape differs between Node lines (a TypeError on 20, a DOMException on 22+).
 */
class ProviderOutage extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** Whether an error from fetching the JWKS means the provider is unreachable or broken. */
function isOutage(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return OUTAGE_CODES.has(code);
  // fetch() itself failing (refused, reset, DNS): a TypeError "fetch failed" with the cause.
  return err instanceof TypeError && err.message === 'fetch failed';
}

/** Bearer JWTs issued by the service's identity provider, verified with `jose`. */
export class JwtProvider implements IdentityProvider {
  readonly kind = 'jwt';
  private readonly key: JWTVerifyGetKey | KeyObject;
  /** What `jwtVerify` is given: with a JWKS, its getter with fetch failures marked as outages. */
  private readonly verifyKey: JWTVerifyGetKey | KeyObject;
  private readonly userClaim: string;
  /** Identified users by the SHA-256 of their token (never the token), until `expires`. */
  private readonly verified = new Map<string, { result: IdentityResult; expires: number }>();
  private readonly now: () => number;

  constructor(private readonly opts: JwtProviderOptions) {
    if (opts.jwksUrl !== undefined) {
      this.key = jose().createRemoteJWKSet(new URL(opts.jwksUrl), {
        cooldownDuration: opts.cooldownMs ?? JWKS_COOLDOWN_MS,
        cacheMaxAge: JWKS_MAX_AGE_MS,
        timeoutDuration: JWKS_TIMEOUT_MS,
      });
    } else if (opts.key !== undefined) {
      this.key = opts.key;
    } else {
      throw new Error('a JWT provider needs a JWKS URL or a key');
    }
    const key = this.key;
    // A key given as a file has no provider behind it that could be down: every failure refuses.
    this.verifyKey =
      typeof key === 'function'
        ? async (header, token) => {
            try {
              return await key(header, token);
            } catch (err) {
              throw isOutage(err) ? new ProviderOutage(err) : err;
            }
          }
        : key;
    this.userClaim = opts.userClaim ?? 'sub';
    this.now = opts.now ?? Date.now;
  }

  async identify(req: IdentityRequest): Promise<IdentityResult> {
    const token = bearerOf(req.authorization);
    if (token === undefined) return { kind: 'anonymous' };
    if (token.split('.').length !== 3) return { kind: 'refused', reason: 'the bearer token is not a JWT' };
    const key = createHash('sha256').update(token).digest('base64url');
    const hit = this.verified.get(key);
    if (hit !== undefined) {
      if (hit.expires > this.now()) return hit.result;
      this.verified.delete(key);
    }
    const { result, exp } = await this.verify(token);
    if (result.kind === 'user') {
      const expires = Math.min(this.now() + VERIFIED_TTL_MS, exp === undefined ? Infinity : exp * 1000);
      if (this.verified.size >= VERIFIED_ENTRIES) {
        const oldest = this.verified.keys().next().value;
        if (oldest !== undefined) this.verified.delete(oldest);
      }
      this.verified.set(key, { result, expires });
    }
    return result;
  }

  private async verify(token: string): Promise<{ result: IdentityResult; exp?: number }> {
    let payload: JWTPayload;
    try {
      const verified = await jose().jwtVerify(token, this.verifyKey as JWTVerifyGetKey, {
        algorithms: [...JWT_ALGORITHMS],
        clockTolerance: JWT_CLOCK_TOLERANCE_S,
        ...(this.opts.issuer !== undefined && { issuer: this.opts.issuer }),
        ...(this.opts.audience !== undefined && { audience: this.opts.audience }),
      });
      payload = verified.payload;
    } catch (err) {
      if (err instanceof ProviderOutage) {
        return { result: { kind: 'unavailable', reason: `the JWKS could not be fetched: ${err.message}` } };
      }
      const message = err instanceof Error ? err.message : String(err);
      return { result: { kind: 'refused', reason: `the JWT is not valid: ${message}` } };
    }
    return { result: this.identityOf(payload), ...(payload.exp !== undefined && { exp: payload.exp }) };
  }

  private identityOf(payload: JWTPayload): IdentityResult {
    const user = payload[this.userClaim];
    if (typeof user !== 'string' || user === '') {
      return { kind: 'refused', reason: `the JWT has no "${this.userClaim}" claim naming the user` };
    }
    if (this.opts.scopesClaim === undefined) return { kind: 'user', user };
    const raw = payload[this.opts.scopesClaim];
    if (raw === undefined) return { kind: 'user', user };
    const scopes = typeof raw === 'string' ? raw.split(' ').filter(Boolean) : raw;
    if (!Array.isArray(scopes) || scopes.some((s) => typeof s !== 'string')) {
      return {
        kind: 'refused',
        reason: `the JWT's "${this.opts.scopesClaim}" claim must be an array of strings or a space-separated string`,
      };
    }
    return { kind: 'user', user, scopes: scopes as string[] };
  }
}
