import type { Dispatcher } from 'undici';
import { HookdError, localProblem, problemOf } from './hookd-error.js';

/** Where a token comes from: the text, or a function asked before every request (a token that renews). */
export type TokenSource = string | undefined | (() => string | undefined | Promise<string | undefined>);

export interface HookdClientOptions {
  /** hookd's API, with its base path if it has one: `http://127.0.0.1:8470`, `https://h.example/api`. */
  baseUrl: string;
  /** A hookd token (`hkd_…`) or the service's JWT, or a function returning one. */
  token?: TokenSource;
  /** Per-request deadline for the whole answer; default 30 000 ms. */
  timeoutMs?: number;
  /** undici dispatcher for every HTTP request: a caller's proxy agent, TLS settings, a MockAgent. */
  dispatcher?: Dispatcher;
  /**
   * How long an idempotent call keeps retrying while hookd answers 503 `STORE_UNAVAILABLE`,
   * waiting its `Retry-After` each time; default 30 000 ms, 0 never retries.
   */
  retryUnavailableMs?: number;
  /** Default `hookd-client`. */
  userAgent?: string;
  /** Told one line per request and answer (never the token). */
  debug?: (line: string) => void;
}

export interface Answer<T> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
}

export interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** Safe to send again (GET, PUT, DELETE, validation, a report with an Idempotency-Key). */
  idempotent?: boolean;
}

const RETRIED_CODES = new Set(['STORE_UNAVAILABLE']);

/** JSON over undici with hookd's problem answers turned into HookdError. */
export class Http {
  readonly baseUrl: string;
  readonly #opts: HookdClientOptions;
  readonly #timeoutMs: number;
  #own: Dispatcher | undefined;
  #undici: Promise<typeof import('undici')> | undefined;

  constructor(opts: HookdClientOptions) {
    const url = URL.canParse(opts.baseUrl) ? new URL(opts.baseUrl) : undefined;
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new TypeError(`baseUrl must be an http:// or https:// URL, not "${opts.baseUrl}"`);
    }
    this.baseUrl = `${url.origin}${url.pathname}`.replace(/\/+$/, '');
    this.#opts = opts;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** The token to send now. */
  async token(): Promise<string | undefined> {
    const t = this.#opts.token;
    return typeof t === 'function' ? await t() : t;
  }

  get userAgent(): string {
    return this.#opts.userAgent ?? 'hookd-client';
  }

  debug(line: string): void {
    this.#opts.debug?.(line);
  }

  /** Closes the connection pool the client made itself (a caller's dispatcher is the caller's). */
  async close(): Promise<void> {
    await this.#own?.close();
  }

  /** One call; `path` is below the API base and already encoded. */
  async call<T>(method: Dispatcher.HttpMethod, path: string, opts: CallOptions = {}): Promise<Answer<T>> {
    return this.#callUrl<T>(method, `${this.baseUrl}${path}`, opts);
  }

  /** Every item of a `Link: rel="next"` listing, page by page as the caller reads on. */
  async *pages<T>(path: string, onFirst?: (a: Answer<T[]>) => void): AsyncGenerator<T, void, undefined> {
    let url: string | undefined = `${this.baseUrl}${path}`;
    let first = true;
    while (url !== undefined) {
      const page: Answer<T[]> = await this.#callUrl<T[]>('GET', url, { idempotent: true });
      if (!Array.isArray(page.body)) {
        throw new HookdError(
          localProblem(
            page.status,
            'UNEXPECTED_RESPONSE',
            'Not a list',
            `GET ${path} answered no JSON array`,
          ),
          `GET ${path}`,
        );
      }
      if (first) onFirst?.(page);
      first = false;
      yield* page.body;
      const next = nextLink(page.headers.link);
      // The Link target is a path with the API base: resolved against the base URL's origin.
      url = next === undefined ? undefined : new URL(next, this.baseUrl).href;
    }
  }

  async #callUrl<T>(method: Dispatcher.HttpMethod, url: string, opts: CallOptions): Promise<Answer<T>> {
    const started = Date.now();
    const bound = opts.idempotent === true ? (this.#opts.retryUnavailableMs ?? 30_000) : 0;
    for (;;) {
      try {
        return await this.#once<T>(method, url, opts);
      } catch (e) {
        if (!(e instanceof HookdError) || e.status !== 503 || !RETRIED_CODES.has(e.code)) throw e;
        const waitMs = Math.max(100, (e.retryAfterSeconds ?? 1) * 1000);
        if (Date.now() - started + waitMs > bound) throw e;
        this.debug(`${e.code}: retrying in ${waitMs} ms`);
        await new Promise((r) => setTimeout(r, waitMs));
      }
    }
  }

  async #once<T>(method: Dispatcher.HttpMethod, url: string, opts: CallOptions): Promise<Answer<T>> {
    const request = `${method} ${new URL(url).pathname}`;
    const token = await this.token();
    const headers: Record<string, string> = {
      accept: 'application/json, application/problem+json',
      'user-agent': this.userAgent,
      ...(token !== undefined && { authorization: `Bearer ${token}` }),
      ...opts.headers,
    };
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    this.debug(`> ${method} ${url}${payload ? ` (${Buffer.byteLength(payload)} bytes)` : ''}`);
    // undici is loaded on first use: a program that never calls the API starts faster.
    this.#undici ??= import('undici');
    const undici = await this.#undici;
    if (this.#opts.dispatcher === undefined) {
      this.#own ??= new undici.Agent({ connect: { timeout: this.#timeoutMs }, keepAliveTimeout: 1000 });
    }
    const dispatcher = this.#opts.dispatcher ?? this.#own;
    const started = performance.now();
    let res: Dispatcher.ResponseData;
    let text: string;
    try {
      res = await undici.request(url, {
        method,
        headers,
        body: payload,
        dispatcher,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      text = await res.body.text();
    } catch (e) {
      throw unreachable(e, request, this.baseUrl, this.#timeoutMs);
    }
    const type = String(res.headers['content-type'] ?? '');
    this.debug(`< ${res.statusCode} ${type} (${Math.round(performance.now() - started)} ms)`);
    if (res.statusCode >= 200 && res.statusCode < 300) {
      let body: unknown;
      if (text !== '') {
        try {
          body = /json/i.test(type) || type === '' ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        if (body === undefined) {
          throw new HookdError(
            localProblem(
              res.statusCode,
              'UNEXPECTED_RESPONSE',
              'Not an answer of hookd',
              `${request} answered something that is not JSON (${type || 'no content type'}): is ${this.baseUrl} hookd's API, with its base path?`,
            ),
            request,
          );
        }
      }
      return { status: res.statusCode, headers: res.headers, body: body as T };
    }
    const retryAfter = Number(res.headers['retry-after']);
    throw new HookdError(problemOf(res.statusCode, type, text, request), request, {
      ...(Number.isFinite(retryAfter) && { retryAfterSeconds: retryAfter }),
      response: { contentType: type, text: text.slice(0, 65536) },
    });
  }
}

/** No answer: refused, reset, a bad certificate, or none in time. */
export function unreachable(e: unknown, request: string, baseUrl: string, timeoutMs: number): HookdError {
  const timedOut = (e as Error)?.name === 'TimeoutError' || (e as Error)?.name === 'AbortError';
  const why = timedOut ? `no answer within ${timeoutMs} ms` : ((e as Error)?.message ?? String(e));
  return new HookdError(
    localProblem(0, timedOut ? 'TIMEOUT' : 'UNREACHABLE', 'hookd is unreachable', `${baseUrl}: ${why}`),
    request,
    { cause: e },
  );
}

/** The target of `rel="next"` in a Link header, if any. */
export function nextLink(header: string | string[] | undefined): string | undefined {
  const text = Array.isArray(header) ? header.join(', ') : header;
  if (!text) return undefined;
  for (const part of text.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>(.*)$/.exec(part);
    const rel = m ? /;\s*rel\s*=\s*"?([^";]*)"?/i.exec(m[2]!) : null;
    if (m && rel && rel[1]!.toLowerCase().split(/\s+/).includes('next')) return m[1];
  }
  return undefined;
}

/** A path segment: an Id or a Name, encoded. */
export const seg = (s: string): string => encodeURIComponent(s);
