import { createHash, randomBytes } from 'node:crypto';
import type { PortalScope } from './access.js';
import type { Brand } from './brand.js';

/** An event for the embedding page, posted by portal.js on the next page the session shows. */
export interface PortalEvent {
  type: string;
  hookId?: string;
  deliveryId?: string;
}

/** A browser signed in by a portal link. */
export interface PortalSession {
  user: string;
  scopes: readonly PortalScope[];
  readOnly: boolean;
  brand: Brand;
  csrf: string;
  created: number;
  lastSeen: number;
  /** Events waiting for the next full page (after a redirect, say). */
  pending: PortalEvent[];
}

const IDLE_MS = 30 * 60_000;
const ABSOLUTE_MS = 12 * 3_600_000;

/**
 * Portal sessions, in this process's memory, as the console's are: the cookie carries 256 random
 * bits and only their SHA-256 is kept; idle 30 min, absolute 12 h. A portal session holds no API
 * token and can make none: it is the link's grant, kept server-side.
 */
export class PortalSessions {
  private readonly byHash = new Map<string, PortalSession>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweep = setInterval(() => {
      for (const [k, s] of this.byHash) if (this.expired(s)) this.byHash.delete(k);
    }, 60_000);
    this.sweep.unref();
  }

  create(grant: Pick<PortalSession, 'user' | 'scopes' | 'readOnly' | 'brand'>): string {
    const id = randomBytes(32).toString('base64url');
    const t = this.now();
    this.byHash.set(hash(id), {
      ...grant,
      csrf: randomBytes(32).toString('base64url'),
      created: t,
      lastSeen: t,
      pending: [],
    });
    return id;
  }

  get(id: string | undefined): PortalSession | undefined {
    if (!id || id.length > 100) return undefined;
    const key = hash(id);
    const s = this.byHash.get(key);
    if (!s) return undefined;
    if (this.expired(s)) {
      this.byHash.delete(key);
      return undefined;
    }
    s.lastSeen = this.now();
    return s;
  }

  end(id: string | undefined): void {
    if (id) this.byHash.delete(hash(id));
  }

  close(): void {
    clearInterval(this.sweep);
  }

  private expired(s: PortalSession): boolean {
    const t = this.now();
    return t - s.lastSeen > IDLE_MS || t - s.created > ABSOLUTE_MS;
  }
}

function hash(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}
