import type { UserStore } from '../store/index.js';
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
/** A token's "last used" is written at most this often: one small update a minute per token, not one per request. */
const TOUCH_EVERY_MS = 60_000;
/** Tokens remembered for that; past it the memory starts over (a write more, never a wrong answer). */
const TOUCH_MEMORY = 10_000;

export class Authenticator {
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly users: UserStore,
    private readonly now: () => number = Date.now,
  ) {}

  async authenticate(header: string | undefined): Promise<Principal | undefined> {
    if (!header) return undefined;
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!m) return undefined;
    const parsed = parseToken(m[1]!);
    if (!parsed) return undefined;
    const record = await this.users.getToken(parsed.id);
    if (!record || !secretMatches(parsed.secret, record.hash)) return undefined;
    this.touch(record.id);
    return { user: record.user, tokenId: record.id };
  }

  /** Records the use, in the background; a store that cannot is no reason to refuse the request. */
  private touch(id: string): void {
    const now = this.now();
    const last = this.touched.get(id);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return;
    if (this.touched.size >= TOUCH_MEMORY) this.touched.clear();
    this.touched.set(id, now);
    this.users.touchToken(id, new Date(now).toISOString()).catch(() => undefined);
  }
}
