/**
 * HTTP(S) callbacks: requests on keep-alive connections of the pinned dispatcher (the address
 * policy judged at connect time, SPEC §10), answers judged by http-outcome.ts. The receiver is
 * the URL's origin, so fairness, breakers, rate limits and verification key on what they always
 * did for HTTP.
 */
import type { Agent, Dispatcher } from 'undici';
import type {
  SendOutcome,
  Transport,
  TransportAttempt,
  TransportContext,
  TransportModule,
} from '../transport.js';
import { httpOutcome } from './http-outcome.js';
import { createPinnedDispatcher } from './pinned-dispatcher.js';
import { Sender } from './sender.js';

/** The `origin` and `path` undici dispatches with, parsed once per callback URL. */
interface Target {
  readonly origin: string;
  readonly path: string;
}

// Callback URLs are per hook, so this stays small; the bound only guards against a pathological mix.
const MAX_TARGETS = 10_000;

/** One pool of connections to every HTTP receiver, shared by all hooks. */
export class HttpTransport implements Transport {
  /** The connection pool to the receivers: the CloudEvents verification handshake uses it too. */
  readonly dispatcher: Agent;
  readonly #sender: Sender;
  readonly #targets = new Map<string, Target>();

  constructor(ctx: TransportContext) {
    this.dispatcher = createPinnedDispatcher(ctx.policy, {
      // No more connections per origin than attempts may be in flight there: undici never queues.
      connections: ctx.perReceiver,
      connectTimeout: Math.min(ctx.connectTimeoutMs, ctx.timeoutMs),
      ...(ctx.lookup && { lookup: ctx.lookup }),
      ...(ctx.tunnel && { tunnel: ctx.tunnel }),
    });
    this.#sender = new Sender(this.dispatcher, ctx.timeoutMs);
  }

  async send(a: TransportAttempt): Promise<SendOutcome> {
    const t = this.#targetOf(a.url);
    const r = await this.#sender.send({
      origin: t.origin,
      path: t.path,
      method: a.method as Dispatcher.HttpMethod,
      headers: a.headers as string[],
      body: a.body,
    });
    return httpOutcome(r, Date.now());
  }

  abortAll(): void {
    this.#sender.abortAll();
  }

  close(): Promise<void> {
    return this.dispatcher.destroy();
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
