/**
 * One connection to one broker with one set of credentials, shared by every hook that names it:
 * opened on first use, reopened in the background with a growing pause after a failure or a
 * loss (so the core hears `onReconnect` as soon as the broker is back and its breaker half-opens
 * at once), closed by `close()`, which also ends a connect in progress. Before each open the host
 * is resolved again and every address checked against the callback target policy, so a name
 * that moves to a denied address is refused at once, as for HTTP.
 */
import type { TransportContext } from '../transport.js';
import { LinkFailure } from './failure.js';
import { resolveAllowed } from './resolve.js';

/** How one kind of broker connection is opened and shut; the link does the rest. */
export interface LinkSpec<C> {
  /** The receiver key the connection serves: `ctx.onReconnect` is told it. */
  readonly receiverKey: string;
  /** `host:port` as the URL writes it, for log and outcome texts. */
  readonly label: string;
  /** The host to resolve (an IPv6 literal without brackets). */
  readonly host: string;
  /**
   * Connects to one resolved, allowed address. `lost` is called once if the connection drops
   * afterwards (not when `shut` closes it); `signal` aborts at shutdown, so closing never waits
   * for a broker that does not answer.
   */
  open(address: string, lost: (cause: string | undefined) => void, signal: AbortSignal): Promise<C>;
  /** Names an error of `open`: `refused` when the broker said no, `unreachable` otherwise. */
  classify(err: unknown): LinkFailure;
  shut(conn: C): Promise<void>;
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 10_000;
/** A link nobody sent through for this long stops reconnecting until it is used again. */
const IDLE_MS = 10 * 60_000;

const CLOSED = 'hookd is shutting down';

export class BrokerLink<C> {
  #conn: C | undefined;
  #opening: Promise<C> | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** When the scheduled reconnect runs. */
  #retryAt = 0;
  /** Why the link is down while a reconnect is scheduled: sends fail fast with it. */
  #down: LinkFailure | undefined;
  #failures = 0;
  /** A failure or loss happened since the last open: the next open is a reconnect. */
  #troubled = false;
  #lastUsed = Date.now();
  #closed = false;
  readonly #shutdown = new AbortController();

  constructor(
    private readonly spec: LinkSpec<C>,
    private readonly ctx: TransportContext,
  ) {}

  /** The open connection, if there is one now. */
  get current(): C | undefined {
    return this.#conn;
  }

  /** The open connection, opening it if needed; rejects with a {@link LinkFailure}. */
  get(): Promise<C> {
    if (this.#closed) return Promise.reject(new LinkFailure('closed', CLOSED));
    this.#lastUsed = Date.now();
    if (this.#conn !== undefined) return Promise.resolve(this.#conn);
    if (this.#opening) return this.#opening;
    if (this.#timer && this.#down) {
      const wait = Math.max(0, this.#retryAt - Date.now());
      return Promise.reject(new LinkFailure('unreachable', this.#down.message, wait));
    }
    return this.#open();
  }

  /** Closes the connection, ends a connect in progress and stops reconnecting. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#shutdown.abort();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#opening?.catch(() => undefined);
    const conn = this.#conn;
    this.#conn = undefined;
    if (conn !== undefined) await this.spec.shut(conn).catch(() => undefined);
  }

  #open(): Promise<C> {
    const opening = this.#connect().then(
      (conn) => this.#opened(conn),
      (err: unknown) => this.#failed(err),
    );
    this.#opening = opening;
    return opening;
  }

  async #connect(): Promise<C> {
    const { spec } = this;
    const addresses = await resolveAllowed(spec.host, this.ctx, spec.label);
    let failure: LinkFailure | undefined;
    for (const address of addresses) {
      if (this.#closed) break;
      try {
        let conn: C | undefined;
        let lostEarly: string | undefined;
        conn = await spec.open(
          address,
          (cause) => {
            if (conn === undefined) lostEarly = cause ?? 'closed';
            else this.#lost(conn, cause);
          },
          this.#shutdown.signal,
        );
        if (lostEarly !== undefined) throw new LinkFailure('unreachable', lostEarly);
        return conn;
      } catch (err) {
        failure = err instanceof LinkFailure ? err : spec.classify(err);
        // The broker answered: another address of the same broker would say the same.
        if (failure.kind !== 'unreachable') break;
      }
    }
    throw failure ?? new LinkFailure('unreachable', `no address to connect to for ${spec.label}`);
  }

  async #opened(conn: C): Promise<C> {
    this.#opening = undefined;
    if (this.#closed) {
      await this.spec.shut(conn).catch(() => undefined);
      throw new LinkFailure('closed', CLOSED);
    }
    this.#conn = conn;
    this.#down = undefined;
    this.#failures = 0;
    if (this.#troubled) {
      this.#troubled = false;
      this.ctx.log('info', 'broker connection re-established', { receiver: this.spec.receiverKey });
      this.ctx.onReconnect?.(this.spec.receiverKey);
    }
    return conn;
  }

  #failed(err: unknown): never {
    this.#opening = undefined;
    if (this.#closed) throw new LinkFailure('closed', CLOSED);
    const failure = err instanceof LinkFailure ? err : this.spec.classify(err);
    // Only an outage is worth reconnecting in the background: a refusal or a denial stays
    // until a send tries again, so a fixed broker account is found by the next attempt.
    if (failure.kind !== 'unreachable') throw failure;
    this.#troubled = true;
    this.#down = failure;
    const wait = this.#schedule();
    throw wait === undefined ? failure : new LinkFailure('unreachable', failure.message, wait);
  }

  #lost(conn: C, cause: string | undefined): void {
    if (conn !== this.#conn || this.#closed) return;
    this.#conn = undefined;
    this.#troubled = true;
    this.#down = new LinkFailure(
      'unreachable',
      `connection to ${this.spec.label} lost${cause ? `: ${cause}` : ''}`,
    );
    this.ctx.log('warn', 'broker connection lost', { receiver: this.spec.receiverKey, cause });
    // A lost client may still hold a socket or timers of its own.
    void this.spec.shut(conn).catch(() => undefined);
    this.#schedule();
  }

  /** Schedules the next reconnect; the pause it waits, or undefined for an idle link. */
  #schedule(): number | undefined {
    if (this.#closed) return undefined;
    if (this.#timer) return Math.max(0, this.#retryAt - Date.now());
    if (Date.now() - this.#lastUsed > IDLE_MS) return undefined;
    const base = Math.min(FIRST_RETRY_MS * 2 ** this.#failures, MAX_RETRY_MS);
    this.#failures++;
    // Jitter keeps many hookd instances from knocking on a returning broker at the same moment.
    const delay = Math.round(base * (0.8 + 0.4 * Math.random()));
    this.#retryAt = Date.now() + delay;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#open().catch(() => undefined);
    }, delay);
    // A pending reconnect never keeps the process alive: close() is the way out, not the timer.
    this.#timer.unref();
    return delay;
  }
}
