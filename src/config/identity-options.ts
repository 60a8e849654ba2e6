import { asBool, asText, type OptionSpec } from './option-spec.js';

/**
 * Identity: who is calling, told by the service's own identity provider (docs/DECISIONS.md
 * "Identity"). At most one provider: a JWT issuer, a trusted proxy's header, or forward auth.
 */
export const IDENTITY_OPTIONS: readonly OptionSpec[] = [
  {
    key: 'identityJwtJwksUrl',
    fileKey: 'identity.jwt.jwksUrl',
    flag: '--identity-jwt-jwks-url <url>',
    env: 'HOOKD_IDENTITY_JWT_JWKS_URL',
    description:
      'accept Bearer JWTs signed by a key of this JWKS (cached; refetched on an unknown kid at most every 30 s)',
    fromText: asText,
  },
  {
    key: 'identityJwtKeyFile',
    fileKey: 'identity.jwt.keyFile',
    flag: '--identity-jwt-key-file <pem>',
    env: 'HOOKD_IDENTITY_JWT_KEY_FILE',
    description: 'accept Bearer JWTs signed by this public key (PEM) instead of a JWKS',
    fromText: asText,
  },
  {
    key: 'identityJwtIssuer',
    fileKey: 'identity.jwt.issuer',
    flag: '--identity-jwt-issuer <iss>',
    env: 'HOOKD_IDENTITY_JWT_ISSUER',
    description: 'the JWT "iss" required',
    fromText: asText,
  },
  {
    key: 'identityJwtAudience',
    fileKey: 'identity.jwt.audience',
    flag: '--identity-jwt-audience <aud>',
    env: 'HOOKD_IDENTITY_JWT_AUDIENCE',
    description: 'the JWT "aud" required',
    fromText: asText,
  },
  {
    key: 'identityJwtUserClaim',
    fileKey: 'identity.jwt.userClaim',
    flag: '--identity-jwt-user-claim <claim>',
    env: 'HOOKD_IDENTITY_JWT_USER_CLAIM',
    description: 'the JWT claim naming the user (default sub)',
    fromText: asText,
  },
  {
    key: 'identityJwtScopesClaim',
    fileKey: 'identity.jwt.scopesClaim',
    flag: '--identity-jwt-scopes-claim <claim>',
    env: 'HOOKD_IDENTITY_JWT_SCOPES_CLAIM',
    description: "the JWT claim whose scopes replace the user's stored Scopes",
    fromText: asText,
  },
  {
    key: 'identityHeader',
    fileKey: 'identity.header',
    flag: '--identity-header <name>',
    env: 'HOOKD_IDENTITY_HEADER',
    description:
      'take the user from this header (e.g. X-Forwarded-User), only from a --trusted-proxy peer; dropped from others',
    fromText: asText,
  },
  {
    key: 'identityForwardUrl',
    fileKey: 'identity.forward.url',
    flag: '--identity-forward-url <url>',
    env: 'HOOKD_IDENTITY_FORWARD_URL',
    description: "forward auth: ask this URL with the caller's Authorization and Cookie who is calling",
    fromText: asText,
  },
  {
    key: 'identityForwardUserHeader',
    fileKey: 'identity.forward.userHeader',
    flag: '--identity-forward-user-header <name>',
    env: 'HOOKD_IDENTITY_FORWARD_USER_HEADER',
    description: 'the forward-auth response header naming the user (default X-User)',
    fromText: asText,
  },
  {
    key: 'identityForwardTtlMs',
    fileKey: 'identity.forward.ttl',
    flag: '--identity-forward-ttl <duration>',
    env: 'HOOKD_IDENTITY_FORWARD_TTL',
    description:
      'how long a forward-auth answer is reused for the same credentials, e.g. 30s (default 30s; 0 disables)',
    fromText: asText,
  },
  {
    key: 'identityForwardTimeoutMs',
    fileKey: 'identity.forward.timeout',
    flag: '--identity-forward-timeout <duration>',
    env: 'HOOKD_IDENTITY_FORWARD_TIMEOUT',
    description: 'forward-auth deadline, 503 after it, e.g. 5s or 500ms (default 5s)',
    fromText: asText,
  },
  {
    key: 'identityRefuseUnknownUsers',
    fileKey: 'identity.refuseUnknownUsers',
    flag: '--identity-refuse-unknown-users',
    env: 'HOOKD_IDENTITY_REFUSE_UNKNOWN_USERS',
    description:
      'refuse (403) API callers a provider identifies but no admin added, instead of creating them',
    fromText: asBool,
  },
];
