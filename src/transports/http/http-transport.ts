/**
 * HTTP(S) callbacks: requests on keep-alive connections of the pinned dispatcher (the address
 * policy judged at connect time, SPEC §10), answers judged by http-outcome.ts. The receiver is
 * the URL's origin, so fairness, breakers, rate limits and verification key on what they always
 * did for HTTP.
 */
import { type Agent, type Dispatcher, request } from 'undici';
import type { TlsConnectOptions } from '../../client-tls/index.js';
import type {
  PreflightAnswer,
  PreflightRequest,
  SendOutcome,
  Transport,
  TransportAttempt,
  TransportContext,
  TransportModule,
} from '../transport.js';
import { httpOutcome } from './http-outcome.js';
import { createPinnedDispatcher } from './pinned-dispatcher.js';
import { Sender } from './sender.js';
import { clientCertificateHint } from './tls-refusal.js';

/** The `origin` and `path` undici dispatches with, parsed once per callback URL. */
interface Target {
  readonly origin: string;
  readonly path: string;
}

// Callback URLs are per hook, so this stays small; the bound only guards against a pathological mix.
const MAX_TARGETS = 10_000;
// Client-certificate pools kept at once; each is a few idle connections at most.
const MAX_TLS_POOLS = 1000;

/** One pool of connections to every HTTP receiver, shared by all hooks. */
export class HttpTransport implements Transport {
  /** The connection pool to the receivers: preflights go out on it too. */
  readonly dispatcher: Agent;
  readonly #sender: Sender;
  readonly #targets = new Map<string, Target>();
  readonly #ctx: TransportContext;
  /**
   * A pool per client certificate (mutual TLS, src/client-tls/), by the identity of its options:
   * a connection made with one hook's certificate is never reused for another's.
   */
  readonly #tlsSenders = new Map<string, { dispatcher: Agent; sender: Sender }>();

  constructor(ctx: TransportContext) {
    this.#ctx = ctx;
    this.dispatcher = this.#pool(undefined);
    this.#sender = new Sender(this.dispatcher, ctx.timeoutMs);
  }

  #pool(tls: TlsConnectOptions | undefined): Agent {
    const ctx = this.#ctx;
    return createPinnedDispatcher(ctx.policy, {
      // No more connections per origin than attempts may be in flight there: undici never queues.
      connections: ctx.perReceiver,
      connectTimeout: Math.min(ctx.connectTimeoutMs, ctx.timeoutMs),
      ...(ctx.lookup && { lookup: ctx.lookup }),
      ...(ctx.tunnel && { tunnel: ctx.tunnel }),
      ...(tls && {
        tls: {
          ...(tls.cert && { cert: tls.cert }),
          ...(tls.key && { key: tls.key }),
          ...(tls.ca && { ca: tls.ca }),
        },
      }),
    });
  }

  #senderFor(tls: TlsConnectOptions | undefined): Sender {
    if (tls === undefined) return this.#sender;
    let s = this.#tlsSenders.get(tls.identity);
    if (s === undefined) {
      if (this.#tlsSenders.size >= MAX_TLS_POOLS) {
        // Hooks replaced many times over leave pools behind: the oldest goes.
        const [id, oldest] = this.#tlsSenders.entries().next().value!;
        this.#tlsSenders.delete(id);
        void oldest.dispatcher.close().catch(() => undefined);
      }
      const dispatcher = this.#pool(tls);
      s = { dispatcher, sender: new Sender(dispatcher, this.#ctx.timeoutMs) };
      this.#tlsSenders.set(tls.identity, s);
    }
    return s.sender;
  }

  async send(a: TransportAttempt): Promise<SendOutcome> {
    const t = this.#targetOf(a.url);
    const r = await this.#senderFor(a.tls).send({
      origin: t.origin,
      path: t.path,
      method: a.method as Dispatcher.HttpMethod,
      headers: a.headers as string[],
      body: a.body,
      ...(a.signal && { signal: a.signal }),
    });
    // The fault names what it may mean: a client certificate missing or not accepted.
    const named = r.closedAtHandshake
      ? { ...r, error: `${r.error}; ${clientCertificateHint(a.tls?.cert)}` }
      : r;
    return httpOutcome(named, Date.now());
  }

  async preflight(r: PreflightRequest): Promise<PreflightAnswer> {
    const res = await request(r.url, {
      method: r.method as Dispatcher.HttpMethod,
      dispatcher: this.dispatcher,
      headers: r.headers,
      headersTimeout: r.timeoutMs,
      bodyTimeout: r.timeoutMs,
      signal: AbortSignal.timeout(r.timeoutMs),
    });
    await res.body.dump().catch(() => undefined);
    return { code: res.statusCode, headers: res.headers };
  }

  abortAll(): void {
    this.#sender.abortAll();
    for (const s of this.#tlsSenders.values()) s.sender.abortAll();
  }

  async close(): Promise<void> {
    await Promise.all([...this.#tlsSenders.values()].map((s) => s.dispatcher.destroy()));
    await this.dispatcher.destroy();
  }

  #targetOf(url: string): Target {
    let t = this.#targets.get(url);
    if (t === undefined) {
      const u = new URL(url);
      t = { origin: u.origin, path: `${u.pathname}${u.search}` };
      if (this.#targets.size >= MAX_TARGETS) this.#targets.clear();
      this.#targets.set(url, t);
    }
    return t;
  }
}

/** `http:` and `https:` Callbacks. */
export const httpTransport: TransportModule = {
  schemes: ['http', 'https'],
  receiverKey: (url) => url.origin,
  check(url) {
    if (url.hostname === '') return 'an http(s) Callback names a host';
    return undefined;
  },
  describe: (url) => `${url.origin}${url.pathname}`,
  create: (ctx) => new HttpTransport(ctx),
};
