import { createPublicKey, type KeyObject } from 'node:crypto';
import type { HookdConfig } from '../config/index.js';
import { ConfigError, readTextFile } from '../config/index.js';
import { ForwardAuthProvider } from './forward-auth-provider.js';
import { HeaderProvider, type TrustCheck } from './header-provider.js';
import { JwtProvider } from './jwt-provider.js';
import type { IdentityProvider } from './provider.js';

/**
 * The provider the configuration selects, or undefined when none is (hookd tokens only).
 * `trusted` is read per request (the header provider's peers). Throws `ConfigError` for a key
 * file that cannot be read or is not a public key.
 */
export function identityProviderFrom(cfg: HookdConfig, trusted: TrustCheck): IdentityProvider | undefined {
  if (cfg.identityJwtJwksUrl !== undefined || cfg.identityJwtKeyFile !== undefined) {
    return new JwtProvider({
      ...(cfg.identityJwtJwksUrl !== undefined && { jwksUrl: cfg.identityJwtJwksUrl }),
      ...(cfg.identityJwtKeyFile !== undefined && { key: readPublicKey(cfg.identityJwtKeyFile) }),
      ...(cfg.identityJwtIssuer !== undefined && { issuer: cfg.identityJwtIssuer }),
      ...(cfg.identityJwtAudience !== undefined && { audience: cfg.identityJwtAudience }),
      ...(cfg.identityJwtUserClaim !== undefined && { userClaim: cfg.identityJwtUserClaim }),
      ...(cfg.identityJwtScopesClaim !== undefined && { scopesClaim: cfg.identityJwtScopesClaim }),
    });
  }
  if (cfg.identityHeader !== undefined) return new HeaderProvider(cfg.identityHeader, trusted);
  if (cfg.identityForwardUrl !== undefined) {
    return new ForwardAuthProvider({
      url: cfg.identityForwardUrl,
      ...(cfg.identityForwardUserHeader !== undefined && { userHeader: cfg.identityForwardUserHeader }),
      ...(cfg.identityForwardTtlMs !== undefined && { ttlMs: cfg.identityForwardTtlMs }),
      ...(cfg.identityForwardTimeoutMs !== undefined && { timeoutMs: cfg.identityForwardTimeoutMs }),
    });
  }
  return undefined;
}

function readPublicKey(file: string): KeyObject {
  const pem = readTextFile(file, 'identity.jwt.keyFile: cannot read ');
  try {
    const key = createPublicKey(pem);
    if (key.asymmetricKeyType === undefined) throw new Error('not an asymmetric key');
    return key;
  } catch (e) {
    throw new ConfigError(
      `identity.jwt.keyFile: ${file} is not a PEM public key or certificate (RSA, EC or Ed25519): ${(e as Error).message}`,
    );
  }
}
