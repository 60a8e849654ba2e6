import type { IncomingMessage } from 'node:http';

/**
 * What a provider may look at to tell who is calling: the credentials (`Authorization`,
 * `Cookie`), any other header, and the TCP peer the request came from (never X-Forwarded-For:
 * that is a header anyone can write). Built lazily from a request, so that an unused identity
 * costs nothing.
 */
export interface IdentityRequest {
  readonly authorization: string | undefined;
  readonly cookie: string | undefined;
  /** A header by name (any case); repeated headers are joined with `, ` as Node joins them. */
  header(name: string): string | undefined;
  /** The address of the TCP peer. */
  readonly peer: string | undefined;
}

/**
 * The answer of a provider:
 * - `user`: identified. `scopes` carries the JWT claim named by `--identity-jwt-scopes-claim`
 *   when there is one (the accounts layer applies it in place of the user's stored scopes).
 * - `anonymous`: no credentials the provider understands (no bearer JWT, an untrusted peer's
 *   identity header, no Authorization or Cookie for forward auth).
 * - `refused`: credentials were presented and are not valid (a bad signature, an expired token,
 *   a 401/403 from the forward-auth endpoint). The reason is safe to show to the caller.
 * - `unavailable`: the provider could not decide (the JWKS or forward-auth endpoint is down,
 *   slow or answered nonsense). Never treated as "allow": the API answers 503, and a proxied
 *   request counts as anonymous.
 */
export type IdentityResult =
  | { kind: 'user'; user: string; scopes?: string[] }
  | { kind: 'anonymous' }
  | { kind: 'refused'; reason: string }
  | { kind: 'unavailable'; reason: string };

export type ProviderKind = 'jwt' | 'header' | 'forward';

/**
 * One source of the service's identities beside hookd's own tokens (docs/DECISIONS.md
 * "Identity"). At most one is configured. `identify` never throws: every failure is a result.
 */
export interface IdentityProvider {
  readonly kind: ProviderKind;
  identify(req: IdentityRequest): Promise<IdentityResult>;
  /**
   * A header that only trusted proxies may set (the header provider's): the reverse proxy drops
   * it from other peers' requests before forwarding, so the upstream never takes a forged one for
   * a trusted one. Lower case.
   */
  readonly guardedHeader?: string;
}

/** The identity view of a Node request; headers are only read when a provider asks. */
export function identityRequestOf(req: IncomingMessage, peer = req.socket?.remoteAddress): IdentityRequest {
  return {
    get authorization() {
      return req.headers.authorization;
    },
    get cookie() {
      return req.headers.cookie;
    },
    header(name: string): string | undefined {
      const v = req.headers[name.toLowerCase()];
      return Array.isArray(v) ? v.join(', ') : v;
    },
    peer,
  };
}

/** The bearer credential of an Authorization header, or undefined. */
export function bearerOf(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  return m ? m[1] : undefined;
}
