/**
 * Where notification endpoints are kept: the same database as the hooks (SQLite file, PostgreSQL
 * for a cluster; the table comes with the store's migrations), or memory in tests. They are few,
 * so the whole list is read at once.
 */
import type Database from 'better-sqlite3';
import type { NotificationEndpoint } from './notification-endpoint.js';

export interface NotificationStore {
  putEndpoint(e: NotificationEndpoint): Promise<void>;
  deleteEndpoint(id: string): Promise<boolean>;
  /** Every endpoint of every user, ordered by Id. */
  allEndpoints(): Promise<NotificationEndpoint[]>;
}

export class MemoryNotificationStore implements NotificationStore {
  private readonly endpoints = new Map<string, NotificationEndpoint>();

  async putEndpoint(e: NotificationEndpoint): Promise<void> {
    this.endpoints.set(e.Id, structuredClone(e));
  }

  async deleteEndpoint(id: string): Promise<boolean> {
    return this.endpoints.delete(id);
  }

  async allEndpoints(): Promise<NotificationEndpoint[]> {
    return [...this.endpoints.values()]
      .map((e) => structuredClone(e))
      .sort((a, b) => (a.Id < b.Id ? -1 : a.Id > b.Id ? 1 : 0));
  }
}

export class SqliteNotificationStore implements NotificationStore {
  constructor(private readonly db: Database.Database) {}

  async putEndpoint(e: NotificationEndpoint): Promise<void> {
    this.db
      .prepare(
        'INSERT INTO notification_endpoints (id, owner, doc) VALUES (?, ?, ?) ' +
          'ON CONFLICT(id) DO UPDATE SET owner = excluded.owner, doc = excluded.doc',
      )
      .run(e.Id, e.Owner, JSON.stringify(e));
  }

  async deleteEndpoint(id: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM notification_endpoints WHERE id = ?').run(id).changes > 0;
  }

  async allEndpoints(): Promise<NotificationEndpoint[]> {
    const docs = this.db
      .prepare('SELECT doc FROM notification_endpoints ORDER BY id')
      .pluck()
      .all() as string[];
    return docs.map((d) => JSON.parse(d) as NotificationEndpoint);
  }
}

/** Anything with pg's `query` (a pool). */
interface Queryable {
  query<R extends Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }>;
}

export class PgNotificationStore implements NotificationStore {
  constructor(private readonly db: Queryable) {}

  async putEndpoint(e: NotificationEndpoint): Promise<void> {
    await this.db.query(
      'INSERT INTO notification_endpoints (id, owner, doc) VALUES ($1, $2, $3) ' +
        'ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, doc = excluded.doc',
      [e.Id, e.Owner, JSON.stringify(e)],
    );
  }

  async deleteEndpoint(id: string): Promise<boolean> {
    return (
      ((await this.db.query('DELETE FROM notification_endpoints WHERE id = $1', [id])).rowCount ?? 0) > 0
    );
  }

  async allEndpoints(): Promise<NotificationEndpoint[]> {
    const { rows } = await this.db.query<{ doc: string }>(
      'SELECT doc FROM notification_endpoints ORDER BY id',
    );
    return rows.map((r) => JSON.parse(r.doc) as NotificationEndpoint);
  }
}
