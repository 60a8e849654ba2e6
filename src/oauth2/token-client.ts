/**
 * Bearer tokens by the client credentials grant (RFC 6749 §4.4, client_secret_basic), cached
 * until shortly before they expire and shared by every hook with the same token URL, client,
 * secret and scope. One request per credentials at a time: hooks that need a token together
 * wait for the same answer. The token endpoint is reached through the callbacks' policy-checked
 * dispatcher, so the address policy applies to it as to a Callback.
 */
import { createHash } from 'node:crypto';
import { type Dispatcher, request } from 'undici';
import type { OAuth2Credentials } from './auth-field.js';

/** A token endpoint that is down or refuses: the message names it and what it said. */
export class TokenEndpointError extends Error {
  override readonly name = 'TokenEndpointError';
}

interface Cached {
  token: string;
  /** Renewed after this (epoch ms): shortly before its expiry. */
  freshUntil: number;
}

/** Lifetime assumed for a token whose answer gives no `expires_in`, ms. */
const DEFAULT_LIFETIME_MS = 5 * 60_000;
const MAX_ANSWER = 64 * 1024;

export interface TokenClientOptions {
  /** The policy-checked dispatcher of the callbacks (src/transports/). */
  dispatcher: Dispatcher;
  /** Time limit of one token request, ms (default 10 s). */
  timeoutMs?: number;
  now?: () => number;
}

export class TokenClient {
  private readonly cache = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<Cached>>();
  /** Token requests made since start (metrics, tests). */
  requests = 0;

  constructor(private readonly opts: TokenClientOptions) {}

  /** A token for these credentials: the cached one while fresh, else a new one. */
  async token(c: OAuth2Credentials): Promise<string> {
    const key = keyOf(c);
    const hit = this.cache.get(key);
    if (hit !== undefined && hit.freshUntil > this.now()) return hit.token;
    let p = this.pending.get(key);
    if (p === undefined) {
      p = this.fetch(c).finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    const got = await p;
    this.cache.set(key, got);
    return got.token;
  }

  /** Closes the connections to token endpoints (shutdown). */
  close(): Promise<void> {
    return this.opts.dispatcher.close();
  }

  /** The receiver refused `token`: the next `token` call asks for a new one (unless another did already). */
  invalidate(c: OAuth2Credentials, token: string): void {
    const key = keyOf(c);
    if (this.cache.get(key)?.token === token) this.cache.delete(key);
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private async fetch(c: OAuth2Credentials): Promise<Cached> {
    this.requests++;
    const where = `token endpoint ${redacted(c.TokenUrl)}`;
    const basic = Buffer.from(`${formEncode(c.ClientId)}:${formEncode(c.ClientSecret)}`).toString('base64');
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (c.Scope !== undefined) form.set('scope', c.Scope);
    const timeout = this.opts.timeoutMs ?? 10_000;
    const started = this.now();
    let status: number;
    let text: string;
    try {
      const res = await request(c.TokenUrl, {
        method: 'POST',
        dispatcher: this.opts.dispatcher,
        headers: {
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form.toString(),
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
      status = res.statusCode;
      text = (await res.body.text()).slice(0, MAX_ANSWER);
    } catch (e) {
      throw new TokenEndpointError(`${where} could not be reached: ${(e as Error).message}`);
    }
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // A non-JSON answer is named by its status below.
    }
    if (status < 200 || status > 299) {
      const error = typeof body.error === 'string' ? ` ${printable(body.error)}` : '';
      const about =
        typeof body.error_description === 'string' ? ` (${printable(body.error_description)})` : '';
      throw new TokenEndpointError(`${where} answered ${status}${error}${about}`);
    }
    if (typeof body.access_token !== 'string' || body.access_token === '') {
      throw new TokenEndpointError(`${where} answered ${status} without an access_token`);
    }
    const lifetime =
      typeof body.expires_in === 'number' && body.expires_in > 0
        ? body.expires_in * 1000
        : DEFAULT_LIFETIME_MS;
    // Renewed a tenth of its lifetime (at most 60 s) before it ends, so no attempt carries a token
    // that expires on the way.
    return { token: body.access_token, freshUntil: started + lifetime - Math.min(60_000, lifetime / 10) };
  }
}

/** RFC 6749 §2.3.1: client id and secret are form-encoded before Basic encoding. */
function formEncode(s: string): string {
  return encodeURIComponent(s).replace(/%20/g, '+');
}

function keyOf(c: OAuth2Credentials): string {
  return createHash('sha256')
    .update(JSON.stringify([c.TokenUrl, c.ClientId, c.ClientSecret, c.Scope ?? null]))
    .digest('base64url');
}

/** The URL without its query (it may hold a key) for messages. */
function redacted(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return 'URL';
  }
}

function printable(s: string): string {
  return s.replace(/[^\x20-\x7e]/g, '?').slice(0, 100);
}
