import type { UserStore } from '../store/store.js';
import { parseToken, secretMatches } from './token.js';

/** Who is calling the API: a hookd token's user, or a user the identity provider vouched for. */
export interface Principal {
  user: string;
  /** The hookd token used; absent when an identity provider identified the caller. */
  tokenId?: string;
  /** Scopes carried by the provider's credentials (`--identity-jwt-scopes-claim`), if any. */
  scopes?: string[];
}

/** Resolves an `Authorization` header to a user, or undefined. Never says which part was wrong. */
export class Authenticator {
  constructor(private readonly users: UserStore) {}

  async authenticate(header: string | undefined): Promise<Principal | undefined> {
    if (!header) return undefined;
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!m) return undefined;
    const parsed = parseToken(m[1]!);
    if (!parsed) return undefined;
    const record = await this.users.getToken(parsed.id);
    if (!record || !secretMatches(parsed.secret, record.hash)) return undefined;
    return { user: record.user, tokenId: record.id };
  }
}
