import { type Http, seg } from './http.js';
import type {
  BulkRedelivery,
  BulkRedeliveryFilter,
  Hook,
  HookInput,
  HookWithWarnings,
  MatchEntry,
  Secret,
  ServedRequest,
} from './types.js';

/** The largest page the API hands out (`limit` 1–1000). */
export const MAX_PAGE = 1000;

/** `/hooks…`: the caller's hooks. An `id` is a hook's Id or its Name. */
export class Hooks {
  readonly #http: Http;

  constructor(http: Http) {
    this.#http = http;
  }

  /** Every hook of the caller, by Id, fetched a page at a time as you iterate. */
  list(opts: { pageSize?: number } = {}): AsyncIterable<Hook> {
    return this.#http.pages<Hook>(`/hooks?limit=${opts.pageSize ?? MAX_PAGE}`);
  }

  async get(id: string): Promise<Hook> {
    return (await this.getVersioned(id)).hook;
  }

  /** The hook and its version (`ETag`), for `replace(…, { ifMatch })` and `delete(…, { ifMatch })`. */
  async getVersioned(id: string): Promise<{ hook: Hook; etag: string | undefined }> {
    const a = await this.#http.call<Hook>('GET', `/hooks/${seg(id)}`, { idempotent: true });
    return { hook: a.body, etag: typeof a.headers.etag === 'string' ? a.headers.etag : undefined };
  }

  async create(hook: HookInput): Promise<HookWithWarnings> {
    return (await this.#http.call<HookWithWarnings>('POST', '/hooks', { body: hook })).body;
  }

  /** PUT: fields left out take their defaults; with `ifMatch`, only while the hook is at that version (else 412). */
  async replace(id: string, hook: HookInput, opts: { ifMatch?: string } = {}): Promise<HookWithWarnings> {
    return (
      await this.#http.call<HookWithWarnings>('PUT', `/hooks/${seg(id)}`, {
        body: hook,
        idempotent: true,
        ...(opts.ifMatch !== undefined && { headers: { 'if-match': opts.ifMatch } }),
      })
    ).body;
  }

  /** With `ifMatch`, only while the hook is at that version (else 412). */
  async delete(id: string, opts: { ifMatch?: string } = {}): Promise<void> {
    await this.#http.call('DELETE', `/hooks/${seg(id)}`, {
      idempotent: true,
      ...(opts.ifMatch !== undefined && { headers: { 'if-match': opts.ifMatch } }),
    });
  }

  /** Re-enables a disabled hook (410 Gone or auto-disable), its configuration unchanged. */
  async enable(id: string): Promise<Hook> {
    return (await this.#http.call<Hook>('POST', `/hooks/${seg(id)}/enable`, { idempotent: true })).body;
  }

  /** Checks a hook as create would (or, with an Id, as that hook's replace) and lints it; nothing is stored. */
  async validate(hook: HookInput): Promise<HookWithWarnings> {
    return (
      await this.#http.call<HookWithWarnings>('POST', '/_hookd/validate', { body: hook, idempotent: true })
    ).body;
  }

  /** Dry run: which of your hooks a served request would fire, with their callbacks (nothing is sent). */
  async match(request: ServedRequest): Promise<MatchEntry[]> {
    return (await this.#http.call<MatchEntry[]>('POST', '/_hookd/match', { body: request, idempotent: true }))
      .body;
  }

  /** Queues a hook's deliveries again: all, or by status and time range (`dryRun` only counts). */
  async redeliver(id: string, filter: BulkRedeliveryFilter = {}): Promise<BulkRedelivery> {
    return (await this.#http.call<BulkRedelivery>('POST', `/hooks/${seg(id)}/redeliver`, { body: filter }))
      .body;
  }
}

/** `/hooks/{id}/secret…`: a hook's signing secret. */
export class Secrets {
  readonly #http: Http;

  constructor(http: Http) {
    this.#http = http;
  }

  /** The `whsec_…` secret and the `whpk_…` public key that verifies v1a signatures. */
  async get(hook: string): Promise<Secret> {
    return (await this.#http.call<Secret>('GET', `/hooks/${seg(hook)}/secret`, { idempotent: true })).body;
  }

  /** A new secret; the old one keeps signing beside it until `PreviousValidUntil`. */
  async rotate(hook: string): Promise<Secret> {
    return (await this.#http.call<Secret>('POST', `/hooks/${seg(hook)}/secret/rotate`)).body;
  }
}
