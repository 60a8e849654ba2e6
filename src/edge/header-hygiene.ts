/**
 * What the proxy does with the request headers that say who the client is or where it came
 * from, when the peer that sent them is not a trusted proxy (docs/DECISIONS.md "Edge
 * safety: upgrades, headers, loops"). CGI-style servers (Rack, WSGI, PHP) read `X_Forwarded_User`
 * and `X-Forwarded-User` both as `HTTP_X_FORWARDED_USER`: a header that hookd guards must be
 * guarded in every spelling that folds onto it under case and `-`/`_`.
 */

/** Headers that state the client's address or the identity: hookd's to write, never a client's. */
const CLIENT_FACTS = ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'];
/**
 * Dropped from untrusted peers and kept from trusted ones: hookd writes X-Forwarded-* itself and
 * does not generate these, so a client's value would reach the upstream as if a proxy had said it.
 * `True-Client-IP` too: some frameworks (chi's RealIP) prefer it to everything else.
 */
const UNTRUSTED_ONLY = new Set(['forwarded', 'x-real-ip', 'true-client-ip']);

export class HeaderHygiene {
  /** Canonical (`-`, lower case) names whose `_` spellings are dropped from every peer. */
  private readonly folded: Set<string>;
  private readonly identity: string | undefined;
  /** The identity header as configured, lower case: kept from trusted proxies even with a `_`. */
  private readonly exact: string | undefined;

  /** `identityHeader`: the `--identity-header` name (any case), or undefined when none is set. */
  constructor(identityHeader?: string) {
    this.identity = identityHeader === undefined ? undefined : fold(identityHeader);
    this.exact = identityHeader?.toLowerCase();
    this.folded = new Set([...CLIENT_FACTS, ...UNTRUSTED_ONLY]);
    if (this.identity !== undefined) this.folded.add(this.identity);
  }

  /**
   * Whether a request header (name already lower case) is dropped before forwarding. Names
   * spelled with `_` that fold onto a guarded one go from every peer: a trusted proxy says these
   * things in their canonical spelling, and nobody downstream should have to choose between two.
   */
  drops(name: string, trusted: boolean): boolean {
    if (name.indexOf('_') !== -1) {
      if (trusted && name === this.exact) return false;
      return this.folded.has(name.replaceAll('_', '-'));
    }
    if (trusted) return false;
    return name === this.identity || UNTRUSTED_ONLY.has(name);
  }
}

/** The name every `-`/`_`, upper/lower case spelling folds onto. */
export function fold(name: string): string {
  return name.toLowerCase().replaceAll('_', '-');
}

/**
 * Whether an upstream `Set-Cookie` value sets one of hookd's own cookies (`hookd_console`,
 * `hookd_signin`, and any later `hookd_…`): the console and the proxied service may share an
 * origin, and the upstream must not be able to plant or clear the console's session. The
 * `__Host-`/`__Secure-` prefixes do not make another name for this purpose.
 */
export function setsOwnCookie(value: string): boolean {
  const eq = value.indexOf('=');
  let name = (eq === -1 ? value : value.slice(0, eq)).trim().toLowerCase();
  if (name.startsWith('__host-')) name = name.slice(7);
  else if (name.startsWith('__secure-')) name = name.slice(9);
  return name.startsWith('hookd_') || name.startsWith('hookd-');
}
