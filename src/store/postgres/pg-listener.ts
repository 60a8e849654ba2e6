import pg from 'pg';
import type { Logger } from 'pino';

export interface PgListenerOptions {
  applicationName: string;
  /** The URL without its password, for log lines. */
  redacted: string;
  log?: Logger;
  /** First wait before reconnecting, ms (default 200); doubles up to `maxReconnectMs`. */
  reconnectMs?: number;
  maxReconnectMs?: number;
  /** How often the connection is checked with a round trip, ms (default 5000). */
  pingMs?: number;
}

type SessionStep = (client: pg.Client) => Promise<void>;

/**
 * One dedicated connection that LISTENs on hookd's channels and reconnects when it is lost.
 * Notifications sent while it was down are gone for good, so every re-established connection is
 * announced to `onReconnect` listeners, which resynchronise from the tables. A connection that
 * stops answering (a half-open TCP connection) is found by a periodic round trip.
 */
export class PgListener {
  private client: pg.Client | undefined;
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  private readonly sessionSteps: SessionStep[] = [];
  private readonly reconnectListeners = new Set<() => void>();
  private started: Promise<void> | undefined;
  /** LISTENs sent on the open connection for channels subscribed after it opened. */
  private listening: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private delay: number;
  private connectedOnce = false;

  constructor(
    private readonly url: string,
    private readonly opts: PgListenerOptions,
  ) {
    this.delay = opts.reconnectMs ?? 200;
  }

  /** Whether the connection is up right now. */
  get connected(): boolean {
    return this.client !== undefined;
  }

  /** Subscribes to a channel; returns the function that unsubscribes. */
  on(channel: string, handler: (payload: string) => void): () => void {
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      const client = this.client;
      if (client) {
        const q = client
          .query(`LISTEN ${pg.escapeIdentifier(channel)}`)
          .catch((err: Error) => this.lost(err, client));
        this.listening = Promise.all([this.listening, q]);
      }
    }
    set.add(handler);
    return () => {
      set.delete(handler);
    };
  }

  /**
   * A step run on every new connection before it is announced, e.g. taking a session lock that
   * must live as long as the connection.
   */
  onSession(step: SessionStep): void {
    this.sessionSteps.push(step);
  }

  /** Called after the connection was lost and is back (not at the first connection). */
  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  /**
   * Connects and LISTENs; resolves once listening on every channel subscribed so far, rejects if
   * the first connection fails.
   */
  async start(): Promise<void> {
    this.started ??= this.connect();
    await this.started;
    await this.listening;
  }

  /** Runs a query on the listening connection (its session locks belong to it). */
  async query(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    if (!this.client) throw new Error('the listening database connection is down');
    return this.client.query(text, values);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.url,
      application_name: this.opts.applicationName,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
    });
    client.on('error', (err) => this.lost(err, client));
    client.on('end', () => this.lost(new Error('connection ended'), client));
    client.on('notification', (n) => {
      const set = this.handlers.get(n.channel);
      if (!set || n.payload === undefined) return;
      for (const h of set) {
        try {
          h(n.payload);
        } catch (err) {
          this.opts.log?.error({ err, channel: n.channel }, 'a notification handler failed');
        }
      }
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys())
        await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      for (const step of this.sessionSteps) await step(client);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.delay = this.opts.reconnectMs ?? 200;
    clearInterval(this.pingTimer);
    this.pingTimer = setInterval(() => {
      client.query('SELECT 1').catch((err: Error) => this.lost(err, client));
    }, this.opts.pingMs ?? 5000);
    this.pingTimer.unref();
    const again = this.connectedOnce;
    this.connectedOnce = true;
    if (again) {
      this.opts.log?.info({ database: this.opts.redacted }, 'notification connection re-established');
      for (const l of this.reconnectListeners) l();
    }
  }

  private lost(err: Error, client?: pg.Client): void {
    if (client !== undefined && client !== this.client) return;
    if (this.client === undefined && client !== undefined) return;
    const c = this.client;
    this.client = undefined;
    clearInterval(this.pingTimer);
    c?.removeAllListeners('end');
    c?.end().catch(() => undefined);
    if (this.stopped) return;
    this.opts.log?.warn(
      { err: err.message, database: this.opts.redacted, retryMs: this.delay },
      'notification connection lost; changes made meanwhile are picked up by a full resync',
    );
    this.retry();
  }

  private retry(): void {
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect().catch((err: Error) => {
        this.opts.log?.warn(
          { err: err.message, database: this.opts.redacted },
          'reconnecting to the database failed',
        );
        this.delay = Math.min(this.delay * 2, this.opts.maxReconnectMs ?? 5000);
        this.retry();
      });
    }, this.delay);
    this.retryTimer.unref();
  }
}
