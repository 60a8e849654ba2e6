import type Database from 'better-sqlite3';
import type pg from 'pg';
import { isUniqueViolation } from '../store/index.js';

/**
 * One answer of a `hookctl listen` receiver to a callback it was relayed: recorded in
 * the delivery log beside the endpoint's attempts, marked as the listener's. Kept apart from
 * `delivery_attempts` so that the retry state, the console's rollups and auto-disable, which are
 * about the hook's real endpoint, never count it.
 */
export interface ListenerAttempt {
  deliveryId: string;
  hookId: string;
  /** The listening connection (`ls_…`), as `hookctl listen` printed it. */
  listener: string;
  /** When the CLI was sent the callback, epoch ms. */
  time: number;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** The first 4 KiB of the receiver's answer. */
  responseBody: string | null;
  /** 1-based among the delivery's listener attempts (set by the store). */
  seq?: number;
}

export interface ListenerAttemptStore {
  record(a: ListenerAttempt): Promise<void>;
  /** A delivery's listener attempts in order. */
  list(deliveryId: string): Promise<ListenerAttempt[]>;
}

type Row = {
  delivery_id: string;
  seq: number;
  hook_id: string;
  listener: string;
  time: number | string;
  status: number | null;
  latency_ms: number;
  error: string | null;
  response: string | null;
};

function fromRow(r: Row): ListenerAttempt {
  return {
    deliveryId: r.delivery_id,
    seq: Number(r.seq),
    hookId: r.hook_id,
    listener: r.listener,
    time: Number(r.time),
    statusCode: r.status,
    latencyMs: Number(r.latency_ms),
    error: r.error,
    responseBody: r.response,
  };
}

const COLUMNS = 'delivery_id, seq, hook_id, listener, time, status, latency_ms, error, response';

/** Two listeners answering the same delivery at once may pick the same `seq`: the loser takes the next. */
async function withSeqRetry(fn: () => Promise<void>): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= 4 || !isUniqueViolation(err)) throw err;
    }
  }
}

export class SqliteListenerAttempts implements ListenerAttemptStore {
  constructor(private readonly db: Database.Database) {}

  async record(a: ListenerAttempt): Promise<void> {
    await withSeqRetry(async () => {
      this.db
        .prepare(
          `INSERT INTO listener_attempts (${COLUMNS}) SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ?, ?, ? ` +
            'FROM listener_attempts WHERE delivery_id = ?',
        )
        .run(
          a.deliveryId,
          a.hookId,
          a.listener,
          a.time,
          a.statusCode,
          a.latencyMs,
          a.error,
          a.responseBody,
          a.deliveryId,
        );
    });
  }

  async list(deliveryId: string): Promise<ListenerAttempt[]> {
    const rows = this.db
      .prepare(`SELECT ${COLUMNS} FROM listener_attempts WHERE delivery_id = ? ORDER BY seq`)
      .all(deliveryId) as Row[];
    return rows.map(fromRow);
  }
}

export class PgListenerAttempts implements ListenerAttemptStore {
  constructor(private readonly pool: Pick<pg.Pool, 'query'>) {}

  async record(a: ListenerAttempt): Promise<void> {
    await withSeqRetry(async () => {
      await this.pool.query(
        `INSERT INTO listener_attempts (${COLUMNS}) SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5, $6, $7, $8 ` +
          'FROM listener_attempts WHERE delivery_id = $1',
        [a.deliveryId, a.hookId, a.listener, a.time, a.statusCode, a.latencyMs, a.error, a.responseBody],
      );
    });
  }

  async list(deliveryId: string): Promise<ListenerAttempt[]> {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM listener_attempts WHERE delivery_id = $1 ORDER BY seq`,
      [deliveryId],
    );
    return rows.map(fromRow);
  }
}

/** For a daemon or a test without a database: bounded, oldest deliveries forgotten first. */
export class MemoryListenerAttempts implements ListenerAttemptStore {
  private readonly byDelivery = new Map<string, ListenerAttempt[]>();
  constructor(private readonly maxDeliveries = 10_000) {}

  async record(a: ListenerAttempt): Promise<void> {
    const list = this.byDelivery.get(a.deliveryId) ?? [];
    list.push({ ...a, seq: list.length + 1 });
    this.byDelivery.set(a.deliveryId, list);
    if (this.byDelivery.size > this.maxDeliveries) {
      this.byDelivery.delete(this.byDelivery.keys().next().value as string);
    }
  }

  async list(deliveryId: string): Promise<ListenerAttempt[]> {
    return (this.byDelivery.get(deliveryId) ?? []).map((a) => ({ ...a }));
  }
}
