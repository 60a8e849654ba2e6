/**
 * Identity: who is calling, told by the service's own identity provider. The public surface:
 * one `IdentityProvider` interface and its three implementations (JWT, trusted header, forward
 * auth), the factory from the configuration, `ApiIdentity` (the API's one authentication path:
 * hookd tokens first, then the provider), and the lazy resolver of proxied requests' users.
 */
export { ApiIdentity, type ApiIdentityOptions } from './api-identity.js';
export { assembleIdentity, type DaemonIdentity } from './assemble.js';
export {
  DEFAULT_FORWARD_TIMEOUT_MS,
  DEFAULT_FORWARD_TTL_MS,
  DEFAULT_FORWARD_USER_HEADER,
  type ForwardAuthOptions,
  ForwardAuthProvider,
} from './forward-auth-provider.js';
export { identityProviderFrom } from './from-config.js';
export { HeaderProvider, type TrustCheck } from './header-provider.js';
export {
  JWKS_COOLDOWN_MS,
  JWT_ALGORITHMS,
  JWT_CLOCK_TOLERANCE_S,
  JwtProvider,
  type JwtProviderOptions,
} from './jwt-provider.js';
export {
  bearerOf,
  type IdentityProvider,
  type IdentityRequest,
  type IdentityResult,
  identityRequestOf,
  type ProviderKind,
} from './provider.js';
export { type RequestUser, requestUserResolver } from './request-user.js';
