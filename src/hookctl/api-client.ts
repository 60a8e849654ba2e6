import type { Dispatcher } from 'undici';
import {
  type CreatedNotificationEndpoint,
  type Delivery,
  type DeliveryFilter,
  type Hook,
  HookdClient,
  HookdError,
  type HookInput,
  type HookType,
  type HookWithWarnings,
  MAX_PAGE,
  type MatchEntry,
  type NotificationEndpoint,
  type NotificationEndpointInput,
  type PortalLink,
  type PortalLinkRequest,
  type Secret,
  type ServedRequest,
  type TailEvent,
  type TailOptions,
  type Token,
  type User,
} from '../client/index.js';
import { errorFromResponse, transportError } from './api-errors.js';
import type { BulkRedeliveryView } from './api-views.js';
import { ApiError, UnreachableError } from './exit-codes.js';

export { MAX_PAGE };

export interface ApiClientOptions {
  /** The server URL including the API base, e.g. `http://127.0.0.1:8470` or `https://h.example/api`. */
  server: string;
  /** Undefined when none was found: requests go out without one and a 401 becomes `missingToken`. */
  token: string | undefined;
  /** The error for a 401 when no token was found ("looked at …"). */
  missingToken?: Error;
  /** Where the token came from, for the 401 message ("HOOKD_TOKEN", "profile default", a file). */
  tokenSource: string;
  /** Per-request deadline; default 30 s. */
  timeoutMs?: number;
  /** --debug: one line per request and response (never the token). */
  debug?: (line: string) => void;
  /** Where requests go: undefined in use, a MockAgent or a test's own agent in tests. */
  dispatcher?: Dispatcher;
}

/**
 * hookctl's side of hookd/client: the client's calls, with its failures turned into what hookctl
 * exits with (in this one place): a problem answer into `ApiError` (exit 1) or `AuthError` (exit
 * 4), no answer into `UnreachableError` (exit 3), each with its hint.
 */
export class ApiClient {
  readonly server: string;
  /** The typed client underneath, for calls this class does not wrap. */
  readonly hookd: HookdClient;
  readonly #missingToken: Error | undefined;
  readonly #tokenSource: string;

  constructor(opts: ApiClientOptions) {
    this.server = opts.server.replace(/\/+$/, '');
    this.#missingToken = opts.missingToken;
    this.#tokenSource = opts.tokenSource;
    this.hookd = new HookdClient({
      baseUrl: this.server,
      token: opts.token,
      userAgent: 'hookctl',
      // A command is run by a person who sees the error at once: no silent waiting.
      retryUnavailableMs: 0,
      ...(opts.timeoutMs !== undefined && { timeoutMs: opts.timeoutMs }),
      ...(opts.debug !== undefined && { debug: opts.debug }),
      ...(opts.dispatcher !== undefined && { dispatcher: opts.dispatcher }),
    });
  }

  /** Lets the process exit promptly: no idle keep-alive sockets left behind. */
  close(): Promise<void> {
    return this.hookd.close();
  }

  /** Runs one client call; its HookdError becomes the error hookctl reports. */
  async run<T>(call: (c: HookdClient) => Promise<T>): Promise<T> {
    try {
      return await call(this.hookd);
    } catch (e) {
      throw e instanceof HookdError ? this.cliError(e) : e;
    }
  }

  /** What hookctl says for a failed call. */
  cliError(e: HookdError): Error {
    const path = e.request.replace(/^\S+ /, '');
    if (e.status === 0) {
      if (e.code === 'TIMEOUT')
        return new UnreachableError(this.server, 'timed out waiting for the answer', e);
      return transportError(this.server, e.cause ?? e);
    }
    if (e.status >= 200 && e.status < 300) {
      return new ApiError(
        e.status,
        { detail: `the server at ${this.server} answered ${e.request} with something that is not JSON` },
        'is this a hookd API? check --server / HOOKD_URL, including the API base path (e.g. …/api)',
      );
    }
    if (e.status === 401 && this.#missingToken) return this.#missingToken;
    const r = e.response ?? { contentType: 'application/problem+json', text: JSON.stringify(e.problem) };
    return errorFromResponse(e.status, r.contentType, r.text, path, this.#tokenSource);
  }

  /** Every item of an async listing, up to `max`. */
  async #collect<T>(items: (c: HookdClient) => AsyncIterable<T>, max: number): Promise<T[]> {
    return this.run(async (c) => {
      const out: T[] = [];
      if (max <= 0) return out;
      for await (const x of items(c)) {
        out.push(x);
        if (out.length >= max) break;
      }
      return out;
    });
  }

  listHooks(max = Number.POSITIVE_INFINITY, pageSize = MAX_PAGE): Promise<Hook[]> {
    return this.#collect((c) => c.hooks.list({ pageSize }), max);
  }

  getHook(id: string): Promise<Hook> {
    return this.run((c) => c.hooks.get(id));
  }

  /** The hook and its ETag (its version, for `If-Match`). */
  getHookVersioned(id: string): Promise<{ hook: Hook; etag: string | undefined }> {
    return this.run((c) => c.hooks.getVersioned(id));
  }

  createHook(doc: unknown): Promise<HookWithWarnings> {
    return this.run((c) => c.hooks.create(doc as HookInput));
  }

  /** PUT; with `ifMatch`, only when the hook is still at that version (else 412). */
  replaceHook(id: string, doc: unknown, ifMatch?: string): Promise<HookWithWarnings> {
    return this.run((c) => c.hooks.replace(id, doc as HookInput, ifMatch === undefined ? {} : { ifMatch }));
  }

  /** Checks a hook document as create (or, with its Id, replace) would; nothing is stored. */
  validateHook(doc: unknown): Promise<HookWithWarnings> {
    return this.run((c) => c.hooks.validate(doc as HookInput));
  }

  enableHook(id: string): Promise<Hook> {
    return this.run((c) => c.hooks.enable(id));
  }

  secret(id: string): Promise<Secret> {
    return this.run((c) => c.secrets.get(id));
  }

  rotateSecret(id: string): Promise<Secret> {
    return this.run((c) => c.secrets.rotate(id));
  }

  /** DELETE; with `ifMatch`, only when the hook is still at that version (else 412). */
  deleteHook(id: string, ifMatch?: string): Promise<void> {
    return this.run((c) => c.hooks.delete(id, ifMatch === undefined ? {} : { ifMatch }));
  }

  hookTypes(): Promise<HookType[]> {
    return this.run((c) => c.hookTypes());
  }

  match(req: ServedRequest): Promise<MatchEntry[]> {
    return this.run((c) => c.hooks.match(req));
  }

  reload(): Promise<unknown> {
    return this.run((c) => c.reload());
  }

  deliveries(
    hookId: string,
    filter: { status?: string; since?: string; until?: string },
    max: number,
    /** Told the `Hookd-Receiver-Concurrency` header: the pace the hook's receiver sets now. */
    pace?: (header: string) => void,
  ): Promise<Delivery[]> {
    return this.#collect(
      (c) =>
        c.deliveries.list({
          hook: hookId,
          // The command checked the words; the server names any it does not know.
          ...(filter as DeliveryFilter),
          pageSize: Math.min(max, MAX_PAGE),
          ...(pace !== undefined && { onReceiverPace: pace }),
        }),
      max,
    );
  }

  redeliver(deliveryId: string): Promise<Delivery> {
    return this.run((c) => c.deliveries.redeliver(deliveryId));
  }

  redeliverHook(
    hookId: string,
    filter: { status?: string; since?: string; until?: string; dryRun?: boolean },
  ): Promise<BulkRedeliveryView> {
    return this.run((c) => c.deliveries.redeliverAll(hookId, filter as never));
  }

  users(): Promise<User[]> {
    return this.run((c) => c.users.list());
  }

  user(name: string): Promise<User> {
    return this.run((c) => c.users.get(name));
  }

  addUser(user: User): Promise<User> {
    return this.run((c) => c.users.add(user));
  }

  replaceUser(name: string, user: User): Promise<User> {
    return this.run((c) => c.users.replace(name, user));
  }

  removeUser(name: string): Promise<void> {
    return this.run((c) => c.users.remove(name));
  }

  tokens(user: string): Promise<Token[]> {
    return this.run((c) => c.users.tokens.list(user));
  }

  createToken(user: string, label?: string): Promise<Token> {
    return this.run((c) => c.users.tokens.create(user, label === undefined ? {} : { Label: label }));
  }

  revokeToken(user: string, id: string): Promise<void> {
    return this.run((c) => c.users.tokens.revoke(user, id));
  }

  portalLink(request: PortalLinkRequest): Promise<PortalLink> {
    return this.run((c) => c.portalLinks.create(request));
  }

  notificationEndpoints(): Promise<NotificationEndpoint[]> {
    return this.run((c) => c.notifications.list());
  }

  addNotificationEndpoint(endpoint: NotificationEndpointInput): Promise<CreatedNotificationEndpoint> {
    return this.run((c) => c.notifications.create(endpoint));
  }

  /** The live tail (hookd/client's, reconnecting across restarts); its failures as hookctl's. */
  async *tail(opts: TailOptions): AsyncGenerator<TailEvent, void, undefined> {
    try {
      yield* this.hookd.tail(opts);
    } catch (e) {
      throw e instanceof HookdError ? this.cliError(e) : e;
    }
  }

  removeNotificationEndpoint(id: string): Promise<void> {
    return this.run((c) => c.notifications.delete(id));
  }
}

export { nextLink } from '../client/index.js';
