import { createHash, randomBytes } from 'node:crypto';
import type { IdempotencyStore } from '../idempotency/index.js';
import type { PortalScope } from './access.js';
import type { Brand } from './brand.js';

/** What a link grants: a portal session as `user`, limited by `scopes` and `readOnly`, in `brand`'s look. */
export interface LinkGrant {
  user: string;
  scopes: PortalScope[];
  readOnly: boolean;
  brand: Brand;
  /** Epoch ms. */
  expiresAt: number;
}

export type Opened = { ok: true; grant: LinkGrant } | { ok: false; why: 'used' | 'expired' };

/**
 * Rows of the idempotency store's table, under owners that no user name can be (a user name has
 * no `:`): a link's grant under its hash, and, once opened, a second row that makes it used.
 */
const LINK = 'hookd:portal-link';
const USED = 'hookd:portal-used';
/** A used mark outlives its link by this much, so that a link is never "new" again before it expired. */
const USED_MARGIN_MS = 3_600_000;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * One-time portal links (docs/DECISIONS.md "The embeddable portal"). The URL carries 256 random
 * bits; the store keeps only their SHA-256, with the grant, until the link expires. Opening it
 * claims a second key atomically: in SQLite one transaction, in PostgreSQL a unique key, so of two
 * opens (on any instance of a cluster) exactly one wins.
 */
export class PortalLinks {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** Stores a grant; returns the token for the URL (shown once, to the caller). */
  async create(grant: LinkGrant): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const key = hash(token);
    const now = this.now();
    const ttlMs = Math.max(1, grant.expiresAt - now);
    await this.store.claim({ owner: LINK, key, fingerprint: 'link', now, ttlMs, staleMs: ttlMs });
    await this.store.complete(LINK, key, 'link', {
      status: 201,
      contentType: 'application/json',
      body: JSON.stringify(grant),
    });
    return token;
  }

  /** Uses a link up: its grant the first time; `used` or `expired` (or unknown) after. */
  async open(token: string): Promise<Opened> {
    if (!TOKEN_SHAPE.test(token)) return { ok: false, why: 'expired' };
    const key = hash(token);
    const now = this.now();
    const found = await this.store.claim({
      owner: LINK,
      key,
      fingerprint: 'link',
      now,
      ttlMs: 1,
      staleMs: 1,
    });
    if (found.kind !== 'replay') {
      // No such link, or it expired: the claim just made is not one.
      if (found.kind === 'claimed') await this.store.release(LINK, key, 'link');
      return { ok: false, why: 'expired' };
    }
    const grant = JSON.parse(found.answer.body) as LinkGrant;
    if (grant.expiresAt <= now) return { ok: false, why: 'expired' };
    const ttlMs = grant.expiresAt - now + USED_MARGIN_MS;
    const use = await this.store.claim({ owner: USED, key, fingerprint: 'used', now, ttlMs, staleMs: ttlMs });
    if (use.kind !== 'claimed') return { ok: false, why: 'used' };
    await this.store.complete(USED, key, 'used', { status: 200, contentType: 'text/plain', body: '' });
    return { ok: true, grant };
  }
}

function hash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
