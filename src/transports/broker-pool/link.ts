/**
 * One lazily opened connection per broker and credentials, shared by every hook that names them.
 * A connection that fails or is lost is reopened in the background with a growing pause, so the
 * core hears `onReconnect` as soon as the broker is back (its breaker half-opens at once); while
 * the pause runs a send is answered at once with the last cause instead of waiting.
 */
import type { SendOutcome, TransportContext } from '../transport.js';
import { BrokerDeniedError, type BrokerTarget, resolveAllowed } from './target.js';

/** An outcome before its latency is known. */
export type Verdict = Omit<SendOutcome, 'latencyMs'>;

/** How one transport opens, watches and closes its client library's connections. */
export interface Connector<C> {
  /**
   * One connect try to an address the policy allowed, within `timeoutMs`; `signal` ends it at
   * shutdown, so closing never waits for a broker that does not answer.
   */
  open(target: BrokerTarget, address: string, timeoutMs: number, signal: AbortSignal): Promise<C>;
  /** Calls `lost` once when the connection ends without `close`. */
  watch(conn: C, lost: (err: Error | undefined) => void): void;
  close(conn: C): Promise<void>;
  /**
   * A connect failure in words. `unreachable` when the broker could not be reached (reopened in
   * the background); otherwise the broker refused us (credentials) and the cause stands until the
   * pause ends and a send tries again.
   */
  failure(err: unknown, target: BrokerTarget): { text: string; unreachable: boolean };
}

const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 10_000;
/** A broker nobody sent to for this long is no longer reopened in the background. */
const IDLE_MS = 10 * 60_000;

// Errors after which the next address of the host is worth a try (an AAAA record without IPv6).
const TRY_NEXT = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'EAFNOSUPPORT']);

function pauseAfter(failures: number): number {
  const base = Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** Math.max(0, failures - 1));
  // Jitter keeps many hookd instances from knocking on a returning broker at the same moment.
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

export type LinkAnswer<C> = { conn: C } | { failure: Verdict };

/** One broker connection and its reconnection. */
export class Link<C> {
  #conn: C | undefined;
  #opening: Promise<LinkAnswer<C>> | undefined;
  #failure: Verdict | undefined;
  #retryAt = 0;
  #failures = 0;
  /** A connection failed or was lost since the last one opened: the next open is a reconnect. */
  #down = false;
  #timer: NodeJS.Timeout | undefined;
  #lastUsed = Date.now();
  #closed = false;
  readonly #shutdown = new AbortController();

  constructor(
    readonly target: BrokerTarget,
    private readonly connector: Connector<C>,
    private readonly ctx: TransportContext,
  ) {}

  /** The open connection, opening it when needed, or why there is none. */
  get(): Promise<LinkAnswer<C>> {
    this.#lastUsed = Date.now();
    if (this.#closed)
      return Promise.resolve({ failure: { kind: 'retry', text: 'hookd is shutting down', aborted: true } });
    if (this.#conn !== undefined) return Promise.resolve({ conn: this.#conn });
    if (this.#opening !== undefined) return this.#opening;
    const wait = this.#retryAt - Date.now();
    if (this.#failure !== undefined && wait > 0) {
      const failure =
        this.#failure.kind === 'retry' ? { ...this.#failure, retryAfterMs: wait } : this.#failure;
      return Promise.resolve({ failure });
    }
    return this.#open();
  }

  #open(): Promise<LinkAnswer<C>> {
    this.#opening = this.#connect().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #connect(): Promise<LinkAnswer<C>> {
    const { target, ctx } = this;
    let addresses: string[];
    try {
      addresses = await resolveAllowed(target.host, ctx.policy, ctx.lookup, ctx.connectTimeoutMs);
    } catch (err) {
      if (err instanceof BrokerDeniedError)
        return this.#failed({ kind: 'refused', text: err.message, denied: true }, false);
      const text = `${target.label} unreachable: ${(err as Error).message}`;
      return this.#failed({ kind: 'retry', text, unreachable: true }, true);
    }
    let lastErr: unknown;
    for (const address of addresses) {
      try {
        const conn = await this.connector.open(target, address, ctx.connectTimeoutMs, this.#shutdown.signal);
        return this.#opened(conn);
      } catch (err) {
        lastErr = err;
        const code = (err as { code?: unknown }).code;
        if (typeof code !== 'string' || !TRY_NEXT.has(code)) break;
      }
    }
    const { text, unreachable } = this.connector.failure(lastErr, target);
    return unreachable
      ? this.#failed({ kind: 'retry', text, unreachable: true }, true)
      : this.#failed({ kind: 'refused', text }, false);
  }

  #opened(conn: C): LinkAnswer<C> {
    if (this.#closed) {
      void this.connector.close(conn).catch(() => {});
      return { failure: { kind: 'retry', text: 'hookd is shutting down', aborted: true } };
    }
    this.#conn = conn;
    this.#failure = undefined;
    this.#failures = 0;
    this.connector.watch(conn, (err) => this.#lost(conn, err));
    if (this.#down) {
      this.#down = false;
      this.ctx.log('info', 'broker connection re-established', { receiver: this.target.receiverKey });
      this.ctx.onReconnect?.(this.target.receiverKey);
    }
    return { conn };
  }

  #failed(failure: Verdict, reopen: boolean): LinkAnswer<C> {
    if (this.#closed) return { failure: { kind: 'retry', text: 'hookd is shutting down', aborted: true } };
    this.#failures++;
    this.#down = true;
    this.#failure = failure;
    const pause = pauseAfter(this.#failures);
    this.#retryAt = Date.now() + pause;
    if (reopen) this.#schedule(pause);
    return { failure: failure.kind === 'retry' ? { ...failure, retryAfterMs: pause } : failure };
  }

  #lost(conn: C, err: Error | undefined): void {
    if (this.#conn !== conn) return;
    this.#conn = undefined;
    this.#down = true;
    if (this.#closed) return;
    const cause = err?.message ? `: ${err.message}` : '';
    this.#failure = {
      kind: 'retry',
      text: `connection to ${this.target.label} lost${cause}`,
      unreachable: true,
    };
    this.ctx.log('warn', 'broker connection lost', {
      receiver: this.target.receiverKey,
      cause: err?.message,
    });
    void this.connector.close(conn).catch(() => {});
    this.#schedule(0);
  }

  #schedule(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#closed || this.#conn !== undefined || this.#opening !== undefined) return;
      if (Date.now() - this.#lastUsed > IDLE_MS) return;
      void this.#open();
    }, ms);
    // A pending reconnect never keeps the process alive: close() is the way out, not the timer.
    this.#timer.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#shutdown.abort();
    clearTimeout(this.#timer);
    const conn = this.#conn;
    this.#conn = undefined;
    await this.#opening?.catch(() => undefined);
    if (conn !== undefined) await this.connector.close(conn).catch(() => {});
  }
}

/** Every link of one transport instance, by broker and credentials. */
export class BrokerPool<C> {
  readonly #links = new Map<string, Link<C>>();
  #closed = false;

  constructor(
    private readonly connector: Connector<C>,
    private readonly ctx: TransportContext,
  ) {}

  /** The link for a target; two passwords for one user are two connections (one may be wrong). */
  link(target: BrokerTarget): Link<C> {
    const key = `${target.receiverKey}\n${target.password}`;
    let link = this.#links.get(key);
    if (link === undefined) {
      link = new Link(target, this.connector, this.ctx);
      if (!this.#closed) this.#links.set(key, link);
      else void link.close();
    }
    return link;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const links = [...this.#links.values()];
    this.#links.clear();
    await Promise.all(links.map((l) => l.close()));
  }
}
