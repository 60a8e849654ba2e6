import { createHash } from 'node:crypto';
import { request } from 'undici';
import type { IdentityProvider, IdentityRequest, IdentityResult } from './provider.js';

export const DEFAULT_FORWARD_USER_HEADER = 'X-User';
export const DEFAULT_FORWARD_TTL_MS = 30_000;
export const DEFAULT_FORWARD_TIMEOUT_MS = 5_000;
/** Cached answers kept at most; the oldest goes first. */
export const FORWARD_CACHE_ENTRIES = 10_000;

export interface ForwardAuthOptions {
  url: string;
  /** The response header naming the user (default `X-User`). */
  userHeader?: string;
  /** How long an answer (a user, or a 401/403) is reused for the same credentials. */
  ttlMs?: number;
  /** After this long without an answer the provider is unavailable (503). */
  timeoutMs?: number;
  now?: () => number;
}

interface Cached {
  result: IdentityResult;
  expires: number;
}

/**
 * Forward auth, as nginx `auth_request` and Traefik ForwardAuth do it: hookd asks the service's
 * auth endpoint with the caller's `Authorization` and `Cookie`. A 2xx with the user header
 * identifies; 401/403 refuses; anything else, a 2xx without the header, a connection error or a
 * timeout is "unavailable", never "allow". Answers are cached by the SHA-256 of the credentials,
 * so the credentials themselves are never kept; concurrent asks with the same credentials share
 * one call.
 */
export class ForwardAuthProvider implements IdentityProvider {
  readonly kind = 'forward';
  private readonly cache = new Map<string, Cached>();
  private readonly inFlight = new Map<string, Promise<IdentityResult>>();
  private readonly userHeader: string;
  private readonly ttlMs: number;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: ForwardAuthOptions) {
    this.userHeader = (opts.userHeader ?? DEFAULT_FORWARD_USER_HEADER).toLowerCase();
    this.ttlMs = opts.ttlMs ?? DEFAULT_FORWARD_TTL_MS;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS;
    this.now = opts.now ?? Date.now;
  }

  /** Answers held in the cache (tests, metrics). */
  get cached(): number {
    return this.cache.size;
  }

  async identify(req: IdentityRequest): Promise<IdentityResult> {
    const authorization = req.authorization;
    const cookie = req.cookie;
    // Nothing to vouch for: no need to ask.
    if (authorization === undefined && cookie === undefined) return { kind: 'anonymous' };
    const key = createHash('sha256')
      .update(authorization ?? '')
      .update('\0')
      .update(cookie ?? '')
      .digest('base64url');
    const hit = this.cache.get(key);
    if (hit !== undefined) {
      if (hit.expires > this.now()) return hit.result;
      this.cache.delete(key);
    }
    let pending = this.inFlight.get(key);
    if (pending === undefined) {
      pending = this.ask(authorization, cookie).then((result) => {
        this.inFlight.delete(key);
        if (result.kind !== 'unavailable' && this.ttlMs > 0) this.remember(key, result);
        return result;
      });
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private remember(key: string, result: IdentityResult): void {
    if (this.cache.size >= FORWARD_CACHE_ENTRIES) {
      // Maps iterate in insertion order: the first key is the oldest answer.
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(key, { result, expires: this.now() + this.ttlMs });
  }

  private async ask(authorization: string | undefined, cookie: string | undefined): Promise<IdentityResult> {
    const headers: Record<string, string> = {};
    if (authorization !== undefined) headers.authorization = authorization;
    if (cookie !== undefined) headers.cookie = cookie;
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      const res = await request(this.opts.url, {
        method: 'GET',
        headers,
        signal,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      // The body is not needed; reading it frees the connection for the next ask.
      await res.body.dump().catch(() => undefined);
      const status = res.statusCode;
      if (status === 401 || status === 403) {
        return { kind: 'refused', reason: `the forward-auth endpoint answered ${status}` };
      }
      if (status < 200 || status > 299) {
        return { kind: 'unavailable', reason: `the forward-auth endpoint answered ${status}` };
      }
      const raw = res.headers[this.userHeader];
      const user = (Array.isArray(raw) ? raw[0] : raw)?.trim();
      if (!user) {
        return {
          kind: 'unavailable',
          reason: `the forward-auth endpoint answered ${status} without a ${this.opts.userHeader ?? DEFAULT_FORWARD_USER_HEADER} header`,
        };
      }
      return { kind: 'user', user };
    } catch (err) {
      const timedOut = signal.aborted || /timeout/i.test((err as { code?: string }).code ?? '');
      return {
        kind: 'unavailable',
        reason: timedOut
          ? `the forward-auth endpoint did not answer within ${this.timeoutMs} ms`
          : `the forward-auth endpoint cannot be reached (${(err as { code?: string }).code ?? (err as Error).message})`,
      };
    }
  }
}
