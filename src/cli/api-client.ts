import type { Agent, Dispatcher } from 'undici';
import { errorFromResponse, transportError } from './api-errors.js';
import type {
  BulkRedeliveryView,
  DeliveryView,
  HookTypeView,
  HookView,
  MatchView,
  SecretView,
} from './api-views.js';
import { ApiError } from './exit-codes.js';

export interface ApiClientOptions {
  /** The server URL including the API base, e.g. `http://127.0.0.1:8470` or `https://h.example/api`. */
  server: string;
  /** Undefined when none was found: requests go out without one and a 401 becomes `missingToken`. */
  token: string | undefined;
  /** The error for a 401 when no token was found ("looked at …"). */
  missingToken?: Error;
  /** Where the token came from, for the 401 message ("HOOKD_TOKEN", "profile default", a file). */
  tokenSource: string;
  /** Per-request deadline for connecting, for the response headers and between body chunks. */
  timeoutMs?: number;
  /** --debug: one line per request and response (never the token). */
  debug?: (line: string) => void;
}

export interface ApiResponse<T> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
}

/** The largest page the API hands out (docs/API.md: `limit` 1–1000). */
export const MAX_PAGE = 1000;

/**
 * A thin client of the hookd API: JSON in and out, problem+json errors turned into `ApiError`
 * (exit 1) or `AuthError` (exit 4), transport failures into `UnreachableError` (exit 3).
 */
export class ApiClient {
  readonly server: string;
  readonly #token: string | undefined;
  readonly #missingToken: Error | undefined;
  readonly #tokenSource: string;
  readonly #timeoutMs: number;
  readonly #debug: ((line: string) => void) | undefined;
  #agent: Agent | undefined;
  #request: typeof import('undici').request | undefined;

  constructor(opts: ApiClientOptions) {
    this.server = opts.server.replace(/\/+$/, '');
    this.#token = opts.token;
    this.#missingToken = opts.missingToken;
    this.#tokenSource = opts.tokenSource;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
    this.#debug = opts.debug;
  }

  /** Lets the process exit promptly: no idle keep-alive sockets left behind. */
  async close(): Promise<void> {
    await this.#agent?.close();
  }

  /** One API call. `path` is relative to the API base and already encoded. */
  async call<T>(
    method: Dispatcher.HttpMethod,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<ApiResponse<T>> {
    return this.#send<T>(method, `${this.server}${path}`, path, body, extra);
  }

  async #send<T>(
    method: Dispatcher.HttpMethod,
    url: string,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = {
      ...(this.#token !== undefined && { authorization: `Bearer ${this.#token}` }),
      accept: 'application/json, application/problem+json',
      'user-agent': 'hookctl',
      ...extra,
    };
    let payload: string | undefined;
    if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const started = performance.now();
    this.#debug?.(`> ${method} ${url}${payload ? ` (${Buffer.byteLength(payload)} bytes)` : ''}`);
    if (!this.#agent || !this.#request) {
      // undici is loaded on first use: commands that never call the API start faster.
      const undici = await import('undici');
      this.#agent = new undici.Agent({ connect: { timeout: this.#timeoutMs }, keepAliveTimeout: 1000 });
      this.#request = undici.request;
    }
    let res: Dispatcher.ResponseData;
    let text: string;
    try {
      res = await this.#request(url, {
        method,
        headers,
        body: payload,
        dispatcher: this.#agent,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
      text = await res.body.text();
    } catch (e) {
      throw this.#transportError(e);
    }
    this.#debug?.(
      `< ${res.statusCode} ${res.headers['content-type'] ?? ''} (${Math.round(performance.now() - started)} ms)`,
    );
    const type = String(res.headers['content-type'] ?? '');
    let parsed: unknown;
    const looksJson = /json/i.test(type) || (type === '' && /^\s*[[{]/.test(text));
    if (text !== '' && looksJson) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    if (res.statusCode >= 200 && res.statusCode < 300) {
      if (text !== '' && parsed === undefined) {
        throw new ApiError(
          res.statusCode,
          {
            detail: `the server at ${this.server} answered ${method} ${path} with something that is not JSON (${type || 'no content type'})`,
          },
          'is this a hookd API? check --server / HOOKD_URL, including the API base path (e.g. …/api)',
        );
      }
      return { status: res.statusCode, headers: res.headers, body: parsed as T };
    }
    if (res.statusCode === 401 && this.#missingToken) throw this.#missingToken;
    throw errorFromResponse(res.statusCode, type, text, path, this.#tokenSource);
  }

  #transportError(e: unknown): Error {
    return transportError(this.server, e);
  }

  /** GETs every page of a `Link: rel="next"` listing, up to `max` items. */
  async paginate<T>(
    path: string,
    max = Number.POSITIVE_INFINITY,
    firstHeaders?: (h: ApiResponse<T[]>['headers']) => void,
  ): Promise<T[]> {
    const items: T[] = [];
    let url: string | undefined = `${this.server}${path}`;
    while (url !== undefined && items.length < max) {
      const res: ApiResponse<T[]> = await this.#send<T[]>('GET', url, pathOf(url, this.server));
      if (items.length === 0) firstHeaders?.(res.headers);
      if (!Array.isArray(res.body)) {
        throw new ApiError(res.status, { detail: `expected a JSON array from GET ${path}` });
      }
      items.push(...res.body);
      const next = nextLink(res.headers.link);
      // The Link target is a path with the API base: resolve it against the server's origin.
      url = next === undefined ? undefined : new URL(next, this.server).href;
    }
    return items.slice(0, max);
  }

  listHooks(): Promise<HookView[]> {
    return this.paginate<HookView>(`/hooks?limit=${MAX_PAGE}`);
  }

  async getHook(id: string): Promise<HookView> {
    return (await this.call<HookView>('GET', `/hooks/${enc(id)}`)).body;
  }

  /** The hook and its ETag (its version, for `If-Match`). */
  async getHookVersioned(id: string): Promise<{ hook: HookView; etag: string | undefined }> {
    const res = await this.call<HookView>('GET', `/hooks/${enc(id)}`);
    const etag = res.headers.etag;
    return { hook: res.body, etag: typeof etag === 'string' ? etag : undefined };
  }

  async createHook(doc: unknown): Promise<HookView> {
    return (await this.call<HookView>('POST', '/hooks', doc)).body;
  }

  /** PUT; with `ifMatch`, only when the hook is still at that version (else 412). */
  async replaceHook(id: string, doc: unknown, ifMatch?: string): Promise<HookView> {
    const extra: Record<string, string> = ifMatch === undefined ? {} : { 'if-match': ifMatch };
    return (await this.call<HookView>('PUT', `/hooks/${enc(id)}`, doc, extra)).body;
  }

  async secret(id: string): Promise<SecretView> {
    return (await this.call<SecretView>('GET', `/hooks/${enc(id)}/secret`)).body;
  }

  async rotateSecret(id: string): Promise<SecretView> {
    return (await this.call<SecretView>('POST', `/hooks/${enc(id)}/secret/rotate`)).body;
  }

  /** DELETE; with `ifMatch`, only when the hook is still at that version (else 412). */
  async deleteHook(id: string, ifMatch?: string): Promise<void> {
    await this.call(
      'DELETE',
      `/hooks/${enc(id)}`,
      undefined,
      ifMatch === undefined ? {} : { 'if-match': ifMatch },
    );
  }

  async hookTypes(): Promise<HookTypeView[]> {
    return (await this.call<HookTypeView[]>('GET', '/hooktypes')).body;
  }

  async match(req: {
    Method: string;
    Path: string;
    StatusCode?: number;
    [field: string]: unknown;
  }): Promise<MatchView[]> {
    return (await this.call<MatchView[]>('POST', '/_hookd/match', req)).body;
  }

  async reload(): Promise<unknown> {
    return (await this.call<unknown>('POST', '/_hookd/reload')).body;
  }

  deliveries(
    hookId: string,
    filter: { status?: string; since?: string; until?: string },
    max: number,
    /** Told the `Hookd-Receiver-Concurrency` header: the pace the hook's receiver sets now. */
    pace?: (header: string) => void,
  ): Promise<DeliveryView[]> {
    const q = new URLSearchParams();
    if (filter.status) q.set('status', filter.status);
    if (filter.since) q.set('since', filter.since);
    if (filter.until) q.set('until', filter.until);
    q.set('limit', String(Math.min(max, MAX_PAGE)));
    return this.paginate<DeliveryView>(`/hooks/${enc(hookId)}/deliveries?${q}`, max, (h) => {
      const v = h['hookd-receiver-concurrency'];
      if (typeof v === 'string') pace?.(v);
    });
  }

  async redeliver(deliveryId: string): Promise<DeliveryView> {
    return (await this.call<DeliveryView>('POST', `/_hookd/deliveries/${enc(deliveryId)}/redeliver`)).body;
  }

  async redeliverHook(
    hookId: string,
    filter: { status?: string; since?: string; until?: string; dryRun?: boolean },
  ): Promise<BulkRedeliveryView> {
    return (await this.call<BulkRedeliveryView>('POST', `/hooks/${enc(hookId)}/redeliver`, filter)).body;
  }
}

function enc(id: string): string {
  return encodeURIComponent(id);
}

function pathOf(url: string, server: string): string {
  return url.startsWith(server) ? url.slice(server.length) : new URL(url).pathname;
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
