import type { Authenticator, Principal } from '../auth/index.js';
import { isValidUserName, parseToken, USER_NAME_RULE } from '../auth/index.js';
import { HookdError } from '../errors/index.js';
import type { Accounts } from '../users/index.js';
import { bearerOf, type IdentityProvider, type IdentityRequest } from './provider.js';

export interface ApiIdentityOptions {
  tokens: Authenticator;
  /** The configured provider, if any. */
  provider?: IdentityProvider;
  /** Makes users on first sight (`Accounts.ensureUser`). */
  accounts?: Pick<Accounts, 'ensureUser' | 'applyClaimedScopes'>;
  /** `--identity-refuse-unknown-users`: a provider's user must have been added by an admin. */
  refuseUnknownUsers?: boolean;
}

const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="hookd"' };
/**
 * hookd's own administrator (src/daemon/bootstrap.ts ADMIN_USER) is reached with its token only:
 * a service user who happens to be called `admin` must not inherit hookd's admin rights.
 */
const RESERVED_USERS: ReadonlySet<string> = new Set(['admin']);

/**
 * Who is calling the API (hooks, dry run, deliveries, secrets, the tail): one path for all of
 * them. A bearer value shaped like a hookd token is a hookd token, valid or not: it never falls
 * through to the provider. Anything else goes to the configured provider, whose user is created
 * on first sight unless `refuseUnknownUsers`. Failures are thrown as catalog errors: 401 for no
 * or refused credentials, 403 for a user hookd will not take, 503 when the provider could not
 * decide.
 */
export class ApiIdentity {
  constructor(private readonly opts: ApiIdentityOptions) {}

  get provider(): IdentityProvider | undefined {
    return this.opts.provider;
  }

  /** hookd's own tokens alone. */
  get tokens(): Authenticator {
    return this.opts.tokens;
  }

  async authenticate(req: IdentityRequest): Promise<Principal> {
    const authorization = req.authorization;
    const bearer = bearerOf(authorization);
    const provider = this.opts.provider;
    if (provider === undefined || (bearer !== undefined && parseToken(bearer) !== undefined)) {
      const principal = await this.opts.tokens.authenticate(authorization);
      if (principal) return principal;
      throw new HookdError(
        'UNAUTHENTICATED',
        authorization
          ? 'the bearer token is not valid (unknown, revoked or malformed)'
          : 'send an API token: Authorization: Bearer <token> (create one with: hookd token create USER)',
        { headers: CHALLENGE },
      );
    }
    const result = await provider.identify(req);
    switch (result.kind) {
      case 'anonymous':
        throw new HookdError('UNAUTHENTICATED', `${anonymousHint(provider.kind)}, or a hookd API token`, {
          headers: CHALLENGE,
        });
      case 'refused':
        throw new HookdError('UNAUTHENTICATED', `the credentials were refused: ${result.reason}`, {
          headers: CHALLENGE,
        });
      case 'unavailable':
        throw new HookdError(
          'IDENTITY_UNAVAILABLE',
          `the identity provider could not tell who is calling (${result.reason}); retry later, or use a hookd API token`,
          { headers: { 'retry-after': '5' } },
        );
    }
    if (!isValidUserName(result.user)) {
      throw new HookdError(
        'FORBIDDEN',
        `the identity provider names the user "${result.user.slice(0, 80)}", which is not a valid hookd user name: it must be ${USER_NAME_RULE}`,
      );
    }
    if (RESERVED_USERS.has(result.user)) {
      throw new HookdError(
        'FORBIDDEN',
        `the identity provider names the user "${result.user}", which is reserved for hookd's own administrator; it signs in with its hookd token (admin.token)`,
      );
    }
    const refuse = this.opts.refuseUnknownUsers === true;
    const known = this.opts.accounts ? await this.opts.accounts.ensureUser(result.user, !refuse) : {};
    if (!known) {
      throw new HookdError(
        'FORBIDDEN',
        `user "${result.user}" is not known to hookd, and unknown users are refused (--identity-refuse-unknown-users); an admin adds it with: hookctl users add ${result.user}`,
      );
    }
    // A JWT's scopes claim replaces the user's stored scopes (written only when they differ).
    if (result.scopes !== undefined) await this.opts.accounts?.applyClaimedScopes(result.user, result.scopes);
    return { user: result.user, ...(result.scopes !== undefined && { scopes: result.scopes }) };
  }
}

function anonymousHint(kind: IdentityProvider['kind']): string {
  switch (kind) {
    case 'jwt':
      return 'send Authorization: Bearer <JWT> issued by the identity provider';
    case 'header':
      return 'sign in through the authenticating proxy in front of hookd';
    case 'forward':
      return 'send the credentials the service knows you by (Authorization or Cookie)';
  }
}
