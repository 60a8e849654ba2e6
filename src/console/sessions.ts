import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A signed-in browser. */
export interface Session {
  user: string;
  /** The API token it signed in with (a revoked token ends the session); absent for a provider. */
  tokenId?: string;
  /** Sent back with every state-changing request (header `X-CSRF-Token` or field `_csrf`). */
  csrf: string;
  created: number;
  lastSeen: number;
}

export interface SessionLimits {
  /** Ends after this long without a request. */
  idleMs: number;
  /** Ends this long after sign-in, however active. */
  absoluteMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { idleMs: 30 * 60_000, absoluteMs: 12 * 3_600_000 };

/**
 * Server-side console sessions, in this process's memory. The cookie carries 256 random bits;
 * only their SHA-256 is kept here, so a dump of the map cannot be replayed as cookies. Sessions
 * end at sign-out, after the idle or the absolute limit, and with the process (docs/DECISIONS.md
 * "Console sessions").
 */
export class SessionStore {
  private readonly byHash = new Map<string, Session>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly limits: SessionLimits = DEFAULT_SESSION_LIMITS,
    private readonly now: () => number = Date.now,
  ) {
    this.sweep = setInterval(() => this.expire(), 60_000);
    this.sweep.unref();
  }

  /** Starts a session; returns the cookie value (shown to nobody else, stored only hashed). */
  create(user: string, tokenId?: string): { id: string; session: Session } {
    const id = randomBytes(32).toString('base64url');
    const t = this.now();
    const session: Session = {
      user,
      ...(tokenId !== undefined && { tokenId }),
      csrf: randomBytes(32).toString('base64url'),
      created: t,
      lastSeen: t,
    };
    this.byHash.set(hash(id), session);
    return { id, session };
  }

  /** The live session of a cookie value, its idle clock restarted; undefined if none or expired. */
  get(id: string | undefined): Session | undefined {
    if (!id || id.length > 100) return undefined;
    const key = hash(id);
    const s = this.byHash.get(key);
    if (!s) return undefined;
    const t = this.now();
    if (t - s.lastSeen > this.limits.idleMs || t - s.created > this.limits.absoluteMs) {
      this.byHash.delete(key);
      return undefined;
    }
    s.lastSeen = t;
    return s;
  }

  end(id: string | undefined): void {
    if (id) this.byHash.delete(hash(id));
  }

  /** Ends every session of a user (their token was revoked, or they were removed). */
  endUser(user: string): void {
    for (const [k, s] of this.byHash) if (s.user === user) this.byHash.delete(k);
  }

  get size(): number {
    return this.byHash.size;
  }

  close(): void {
    clearInterval(this.sweep);
  }

  private expire(): void {
    const t = this.now();
    for (const [k, s] of this.byHash) {
      if (t - s.lastSeen > this.limits.idleMs || t - s.created > this.limits.absoluteMs)
        this.byHash.delete(k);
    }
  }
}

function hash(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

/** Constant-time comparison of two CSRF tokens. */
export function sameToken(a: string | undefined, b: string): boolean {
  if (typeof a !== 'string') return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
