import { resolve } from 'node:path';
import { asBool, asText, type CrossCheck, type OptionSpec, refuse } from './spec.js';
import { httpUrl, text, trueOrFalse } from './values.js';

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const DURATION_MS: Record<string, number> = { ms: 1, '': 1000, s: 1000, m: 60_000, h: 3_600_000 };

const nonEmpty = (v: unknown): string => (text(v) === '' ? refuse('must not be empty') : (v as string));

const headerName =
  (example: string) =>
  (v: unknown): string =>
    HEADER_NAME.test(text(v)) ? (v as string) : refuse(`must be a header name such as ${example}`);

/** A duration of 500ms, 5s, 2m (a bare number is seconds), in ms. */
const duration =
  (min: number, max: number) =>
  (v: unknown): number => {
    const rule = `must be a duration such as 500ms, 5s or 2m (a bare number is seconds), from ${min} ms to ${max / 1000} s`;
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(String(v));
    if (!m || (typeof v !== 'string' && typeof v !== 'number')) return refuse(rule);
    const ms = Math.round(Number(m[1]) * DURATION_MS[m[2] ?? '']!);
    return ms < min || ms > max ? refuse(rule) : ms;
  };

/**
 * Identity: who is calling, told by the service's own identity provider (docs/DECISIONS.md
 * "Identity"). At most one provider: a JWT issuer, a trusted proxy's header, or forward auth.
 */
export const IDENTITY_OPTIONS = {
  identityJwtJwksUrl: {
    fileKey: 'identity.jwt.jwksUrl',
    flag: '--identity-jwt-jwks-url <url>',
    env: 'HOOKD_IDENTITY_JWT_JWKS_URL',
    description:
      'accept Bearer JWTs signed by a key of this JWKS (cached; refetched on an unknown kid at most every 30 s)',
    fromText: asText,
    parse: httpUrl(),
  },
  identityJwtKeyFile: {
    fileKey: 'identity.jwt.keyFile',
    flag: '--identity-jwt-key-file <pem>',
    env: 'HOOKD_IDENTITY_JWT_KEY_FILE',
    description: 'accept Bearer JWTs signed by this public key (PEM) instead of a JWKS',
    fromText: asText,
    parse: (v: unknown): string => resolve(text(v)),
  },
  identityJwtIssuer: {
    fileKey: 'identity.jwt.issuer',
    flag: '--identity-jwt-issuer <iss>',
    env: 'HOOKD_IDENTITY_JWT_ISSUER',
    description: 'the JWT "iss" required',
    fromText: asText,
    parse: nonEmpty,
  },
  identityJwtAudience: {
    fileKey: 'identity.jwt.audience',
    flag: '--identity-jwt-audience <aud>',
    env: 'HOOKD_IDENTITY_JWT_AUDIENCE',
    description: 'the JWT "aud" required',
    fromText: asText,
    parse: nonEmpty,
  },
  identityJwtUserClaim: {
    fileKey: 'identity.jwt.userClaim',
    flag: '--identity-jwt-user-claim <claim>',
    env: 'HOOKD_IDENTITY_JWT_USER_CLAIM',
    description: 'the JWT claim naming the user (default sub)',
    fromText: asText,
    parse: nonEmpty,
    shownDefault: 'sub',
  },
  identityJwtScopesClaim: {
    fileKey: 'identity.jwt.scopesClaim',
    flag: '--identity-jwt-scopes-claim <claim>',
    env: 'HOOKD_IDENTITY_JWT_SCOPES_CLAIM',
    description: "the JWT claim whose scopes replace the user's stored Scopes",
    fromText: asText,
    parse: nonEmpty,
  },
  identityHeader: {
    fileKey: 'identity.header',
    flag: '--identity-header <name>',
    env: 'HOOKD_IDENTITY_HEADER',
    description:
      'take the user from this header (e.g. X-Forwarded-User), only from a --trusted-proxy peer; dropped from others',
    fromText: asText,
    parse: headerName('X-Forwarded-User'),
  },
  identityForwardUrl: {
    fileKey: 'identity.forward.url',
    flag: '--identity-forward-url <url>',
    env: 'HOOKD_IDENTITY_FORWARD_URL',
    description: "forward auth: ask this URL with the caller's Authorization and Cookie who is calling",
    fromText: asText,
    parse: httpUrl(),
  },
  identityForwardUserHeader: {
    fileKey: 'identity.forward.userHeader',
    flag: '--identity-forward-user-header <name>',
    env: 'HOOKD_IDENTITY_FORWARD_USER_HEADER',
    description: 'the forward-auth response header naming the user (default X-User)',
    fromText: asText,
    parse: headerName('X-User'),
    shownDefault: 'X-User',
  },
  identityForwardTtlMs: {
    fileKey: 'identity.forward.ttl',
    flag: '--identity-forward-ttl <duration>',
    env: 'HOOKD_IDENTITY_FORWARD_TTL',
    description:
      'how long a forward-auth answer is reused for the same credentials, e.g. 30s (default 30s; 0 disables)',
    fromText: asText,
    parse: duration(0, 3_600_000),
    shownDefault: '30s',
  },
  identityForwardTimeoutMs: {
    fileKey: 'identity.forward.timeout',
    flag: '--identity-forward-timeout <duration>',
    env: 'HOOKD_IDENTITY_FORWARD_TIMEOUT',
    description: 'forward-auth deadline, 503 after it, e.g. 5s or 500ms (default 5s)',
    fromText: asText,
    parse: duration(1, 60_000),
    shownDefault: '5s',
  },
  identityRefuseUnknownUsers: {
    fileKey: 'identity.refuseUnknownUsers',
    flag: '--identity-refuse-unknown-users',
    env: 'HOOKD_IDENTITY_REFUSE_UNKNOWN_USERS',
    description:
      'refuse (403) API callers a provider identifies but no admin added, instead of creating them',
    fromText: asBool,
    parse: trueOrFalse(),
  },
} as const satisfies Record<string, OptionSpec>;

const PROVIDERS = ['identityJwtJwksUrl', 'identityJwtKeyFile', 'identityHeader', 'identityForwardUrl'];
const JWT_TUNING = [
  'identityJwtIssuer',
  'identityJwtAudience',
  'identityJwtUserClaim',
  'identityJwtScopesClaim',
];
const FORWARD_TUNING = ['identityForwardUserHeader', 'identityForwardTtlMs', 'identityForwardTimeoutMs'];

/**
 * At most one provider, and each provider's tuning only with its provider (a lone
 * `--identity-jwt-issuer` would otherwise be silently ignored).
 */
export const IDENTITY_CHECKS: readonly CrossCheck[] = [
  (_config, at) => {
    const providers = PROVIDERS.map((k) => at.given(k)).filter((p): p is string => p !== undefined);
    if (providers.length > 1) {
      at.fatal(
        `identity: configure at most one identity provider (a JWKS URL or a JWT key file, an identity header, or a forward-auth URL); found ${providers.join(', ')}`,
      );
    }
    const jwt = at.given('identityJwtJwksUrl') ?? at.given('identityJwtKeyFile');
    for (const k of JWT_TUNING) {
      if (at.given(k) !== undefined && jwt === undefined)
        at.problem(k, 'applies to JWTs only: set --identity-jwt-jwks-url or --identity-jwt-key-file too');
    }
    for (const k of FORWARD_TUNING) {
      if (at.given(k) !== undefined && at.given('identityForwardUrl') === undefined)
        at.problem(k, 'applies to forward auth only: set --identity-forward-url too');
    }
    if (at.given('identityRefuseUnknownUsers') !== undefined && providers.length === 0)
      at.problem(
        'identityRefuseUnknownUsers',
        'needs an identity provider (--identity-jwt-*, --identity-header or --identity-forward-url)',
      );
  },
];
