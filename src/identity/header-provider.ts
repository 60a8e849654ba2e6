import type { IdentityProvider, IdentityRequest, IdentityResult } from './provider.js';

export interface TrustCheck {
  trusts(address: string | undefined): boolean;
}

/**
 * The user named by a header that an authenticating proxy in front of hookd sets (oauth2-proxy,
 * nginx `auth_request` or `auth_basic` with `proxy_set_header X-Forwarded-User $remote_user`).
 * Believed only from a peer in `trustedProxies`; from anyone else it is ignored here, and the
 * reverse proxy drops it before forwarding (`guardedHeader`).
 */
export class HeaderProvider implements IdentityProvider {
  readonly kind = 'header';
  readonly guardedHeader: string;

  /** @param trusted read per request, so a reload of `trustedProxies` takes effect at once. */
  constructor(
    readonly headerName: string,
    private readonly trusted: TrustCheck,
  ) {
    this.guardedHeader = headerName.toLowerCase();
  }

  async identify(req: IdentityRequest): Promise<IdentityResult> {
    if (!this.trusted.trusts(req.peer)) return { kind: 'anonymous' };
    const value = req.header(this.guardedHeader)?.trim();
    if (!value) return { kind: 'anonymous' };
    // Node joins a repeated header with ", ": two users in one request is no identity at all.
    if (value.includes(',')) {
      return { kind: 'refused', reason: `the ${this.headerName} header names more than one user` };
    }
    return { kind: 'user', user: value };
  }
}
