import type { UserStore } from '../store/index.js';
import { hashMatches, parseToken } from './token.js';

/** Who is calling the API: a hookd token's user, or a user the identity provider vouched for. */
export interface Principal {
  user: string;
  /** The hookd token used; absent when an identity provider identified the caller. */
  tokenId?: string;
  /** Scopes carried by the provider's credentials (`--identity-jwt-scopes-claim`), if any. */
  scopes?: string[];
}

/** A token's "last used" is written at most this often: one small update a minute per token, not one per request. */
const TOUCH_EVERY_MS = 60_000;
/** Tokens remembered for that; past it the memory starts over (a write more, never a wrong answer). */
const TOUCH_MEMORY = 10_000;
/** Tokens whose record is kept between requests; past it the memory starts over (a read more). */
const VERIFIED_MEMORY = 10_000;

/** What a token's stored record says, kept while the store's credential stamp stays the same. */
interface Known {
  hash: Buffer;
  user: string;
  stamp: number;
}

/**
 * Resolves an `Authorization` header to a user, or undefined. Never says which part was wrong.
 *
 * A token's record is read from the store again whenever the store's credential stamp has moved
 * since it was read (a token or user changed here or in another process), so that a revoked token
 * is refused on the very next request; a store without a stamp is read on every request. The
 * presented secret is hashed and compared with the stored hash on every request either way: what
 * is kept is the store's answer, never a verdict on a secret.
 */
export class Authenticator {
  private readonly touched = new Map<string, number>();
  private readonly known = new Map<string, Known>();

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
    const known = await this.record(parsed.id);
    if (!known || !hashMatches(parsed.secret, known.hash)) return undefined;
    this.touch(parsed.id);
    return { user: known.user, tokenId: parsed.id };
  }

  /** The token's record: kept from an earlier request while the stamp has not moved, else read. */
  private async record(id: string): Promise<Known | undefined> {
    // Read before the record, so that a change made while it is read moves the stamp past it.
    const stamp = this.users.credentialStamp?.();
    if (stamp !== undefined) {
      const kept = this.known.get(id);
      if (kept !== undefined && kept.stamp === stamp) return kept;
    }
    const record = await this.users.getToken(id);
    if (!record) {
      this.known.delete(id);
      return undefined;
    }
    const known: Known = { hash: Buffer.from(record.hash, 'hex'), user: record.user, stamp: stamp ?? -1 };
    if (stamp !== undefined) {
      if (this.known.size >= VERIFIED_MEMORY) this.known.clear();
      this.known.set(id, known);
    }
    return known;
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
