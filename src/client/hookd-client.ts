import { Notifications, PortalLinks, Users } from './admin.js';
import { Deliveries } from './deliveries.js';
import { Hooks, Secrets } from './hooks.js';
import { type HookdClientOptions, Http } from './http.js';
import { type TailOptions, tail } from './tail.js';
import type { HookType, ReloadResult, ReportResult, ServedRequest, TailEvent } from './types.js';

/**
 * A typed client of hookd's API for a service's back end: hooks, reports of served requests,
 * deliveries, secrets, users and tokens, portal links, notifications and the live tail. Every
 * failure is a `HookdError`; idempotent calls ride out a store outage (`retryUnavailableMs`).
 */
export class HookdClient {
  readonly hooks: Hooks;
  readonly deliveries: Deliveries;
  readonly secrets: Secrets;
  readonly users: Users;
  readonly portalLinks: PortalLinks;
  readonly notifications: Notifications;
  readonly #http: Http;

  constructor(opts: HookdClientOptions) {
    this.#http = new Http(opts);
    this.hooks = new Hooks(this.#http);
    this.deliveries = new Deliveries(this.#http);
    this.secrets = new Secrets(this.#http);
    this.users = new Users(this.#http);
    this.portalLinks = new PortalLinks(this.#http);
    this.notifications = new Notifications(this.#http);
  }

  /** The API's URL as given, without a trailing slash. */
  get baseUrl(): string {
    return this.#http.baseUrl;
  }

  /** The hook types (BeforeCompletion, AfterCompletion). */
  async hookTypes(): Promise<HookType[]> {
    return (await this.#http.call<HookType[]>('GET', '/hooktypes', { idempotent: true })).body;
  }

  /**
   * Reports requests the service served without the proxy, so that they fire hooks. With an
   * `idempotencyKey` a retry is safe (the first answer comes back, nothing fires again) and the
   * call is retried through a store outage; `replayed` says the answer is such a stored one.
   */
  async report(
    request: ServedRequest | ServedRequest[],
    opts: { idempotencyKey?: string } = {},
  ): Promise<ReportResult & { replayed: boolean }> {
    const a = await this.#http.call<ReportResult>('POST', '/_hookd/report', {
      body: request,
      ...(opts.idempotencyKey !== undefined && {
        headers: { 'idempotency-key': opts.idempotencyKey },
        idempotent: true,
      }),
    });
    return { ...a.body, replayed: a.headers['idempotent-replayed'] === 'true' };
  }

  /** Re-reads hookd's configuration (admin only). */
  async reload(): Promise<ReloadResult> {
    return (await this.#http.call<ReloadResult>('POST', '/_hookd/reload')).body;
  }

  /** The OpenAPI document the server serves. */
  async openApi(): Promise<Record<string, unknown>> {
    return (
      await this.#http.call<Record<string, unknown>>('GET', '/_hookd/openapi.json', { idempotent: true })
    ).body;
  }

  /** The live tail: fired callbacks and attempts, reconnecting across restarts (see `TailOptions`). */
  tail(opts: TailOptions = {}): AsyncIterable<TailEvent> {
    return tail(this.#http, opts);
  }

  /** Closes the connection pool the client made (not a dispatcher you gave it). */
  close(): Promise<void> {
    return this.#http.close();
  }
}
