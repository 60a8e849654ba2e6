import type pg from 'pg';
import type { Hook } from '../../hook/index.js';
import { sharedDatabase } from '../coordination.js';
import type { HookSecretRecord } from '../delivery-store.js';
import { isUniqueViolation, nameConflict } from '../name-conflict.js';
import {
  type CredentialRow,
  type CredentialTable,
  HOOK_DOC_WITH_CREDENTIALS,
  hookDocument,
  hookFromDocument,
  PLAIN_SECRETS,
  type SecretCodec,
  sealRecord,
} from '../secret-codec.js';
import type {
  Coordination,
  HookChangeWatcher,
  HookStore,
  PageRequest,
  Store,
  TokenRecord,
  UserRecord,
} from '../store.js';
import { userOf } from '../user-row.js';
import { CHANGES_CHANNEL } from './migrations.js';
import type { PgDatabase } from './pg-database.js';

type Queryable = Pick<pg.Pool, 'query'>;

/** How long after a failed fetch of changed hooks it is tried again, ms. */
const RETRY_FETCH_MS = 1000;

/**
 * Hooks in one table (`hooks`, or the UNLOGGED `eph_hooks` of `Persist: false` hooks), as the
 * JSON document the API returns. Text, not jsonb: jsonb refuses the `\ud800` escapes that
 * JSON.stringify writes for a lone surrogate, and the document must come back exactly.
 */
export class PgHookTable implements HookStore, CredentialTable {
  readonly credentialKind = 'hook';
  private readonly db: Queryable;

  constructor(
    private readonly database: PgDatabase,
    readonly table: 'hooks' | 'eph_hooks',
    /** How a new hook's first secret is written (the daemon's sealer; give the delivery store the same). */
    private readonly secrets: SecretCodec = PLAIN_SECRETS,
  ) {
    this.db = database.pool;
  }

  async putHook(hook: Hook, firstSecret?: HookSecretRecord): Promise<void> {
    const write = (q: Queryable) =>
      q.query(
        `INSERT INTO ${this.table} (id, owner, doc, modified, name) VALUES ($1, $2, $3, $4, $5) ` +
          'ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, doc = excluded.doc, modified = excluded.modified, name = excluded.name',
        [hook.Id, hook.Owner, hookDocument(this.secrets, hook), hook.Modified, hook.Name ?? null],
      );
    try {
      if (firstSecret === undefined) {
        await write(this.db);
        return;
      }
      const sealed = sealRecord(this.secrets, firstSecret);
      const secrets = this.table === 'hooks' ? 'hook_secrets' : 'eph_hook_secrets';
      await this.database.transaction(async (c) => {
        await c.query(
          `INSERT INTO ${secrets} (hook_id, secret, previous, previous_valid_until) VALUES ($1, $2, $3, $4)`,
          [sealed.hookId, sealed.secret, sealed.previous, firstSecret.previousValidUntil],
        );
        await write(c);
      });
    } catch (err) {
      if (hook.Name !== undefined && isUniqueViolation(err)) throw nameConflict(hook.Name);
      throw err;
    }
  }

  async getHookByName(owner: string, name: string): Promise<Hook | undefined> {
    const { rows } = await this.db.query<{ doc: string }>(
      `SELECT doc FROM ${this.table} WHERE owner = $1 AND name = $2`,
      [owner, name],
    );
    return rows[0] && hookFromDocument(this.secrets, rows[0].doc);
  }

  async deleteHook(id: string): Promise<boolean> {
    return ((await this.db.query(`DELETE FROM ${this.table} WHERE id = $1`, [id])).rowCount ?? 0) > 0;
  }

  async getHook(id: string): Promise<Hook | undefined> {
    const { rows } = await this.db.query<{ doc: string }>(`SELECT doc FROM ${this.table} WHERE id = $1`, [
      id,
    ]);
    return rows[0] && hookFromDocument(this.secrets, rows[0].doc);
  }

  async listHooks(owner: string, page: PageRequest = {}): Promise<Hook[]> {
    const { rows } = await this.db.query<{ doc: string }>(
      `SELECT doc FROM ${this.table} WHERE owner = $1 AND id > $2 ORDER BY id LIMIT $3`,
      [owner, page.after ?? '', page.limit ?? null],
    );
    return rows.map((r) => hookFromDocument(this.secrets, r.doc));
  }

  async allHooks(): Promise<Hook[]> {
    const { rows } = await this.db.query<{ doc: string }>(`SELECT doc FROM ${this.table}`);
    return rows.map((r) => hookFromDocument(this.secrets, r.doc));
  }

  async credentialRows(after: string, limit: number): Promise<CredentialRow[]> {
    const { rows } = await this.db.query<CredentialRow>(
      `SELECT id, id AS "hookId", doc AS text FROM ${this.table} WHERE id > $1 AND ${HOOK_DOC_WITH_CREDENTIALS('doc', 'strpos')} ORDER BY id LIMIT $2`,
      [after, limit],
    );
    return rows;
  }

  async replaceCredentialRow(row: CredentialRow, text: string): Promise<boolean> {
    const r = await this.db.query(`UPDATE ${this.table} SET doc = $1 WHERE id = $2 AND doc = $3`, [
      text,
      row.id,
      row.text,
    ]);
    return (r.rowCount ?? 0) > 0;
  }
}

/**
 * The PostgreSQL store: users, tokens and `Persist: true` hooks, shared by every hookd instance
 * on the database. `ephemeralHooks` is the table of `Persist: false` hooks, shared too (a
 * cluster is one service; see docs/DECISIONS.md). Every hook change is announced by a trigger
 * (`hookd_changes`), which is how the instances' match indexes follow each other.
 */
const PG_TOKEN_COLUMNS = 'id, "user", hash, label, created, last_used AS "lastUsed"';
type PgTokenRow = Omit<TokenRecord, 'lastUsed'> & { lastUsed: string | null };

/** A token from its row: `lastUsed` only when recorded. */
function pgTokenOf(r: PgTokenRow): TokenRecord {
  const { lastUsed, ...t } = r;
  return lastUsed === null ? t : { ...t, lastUsed };
}

export class PostgresStore implements Store {
  readonly kind = 'postgres';
  readonly coordination: Coordination = sharedDatabase(this);
  readonly hooks: PgHookTable;
  readonly ephemeralHooks: PgHookTable;

  constructor(
    readonly db: PgDatabase,
    private readonly opts: { ownsDatabase?: boolean; secrets?: SecretCodec } = {},
  ) {
    this.hooks = new PgHookTable(db, 'hooks', opts.secrets);
    this.ephemeralHooks = new PgHookTable(db, 'eph_hooks', opts.secrets);
  }

  putHook(hook: Hook, firstSecret?: HookSecretRecord): Promise<void> {
    return this.hooks.putHook(hook, firstSecret);
  }

  deleteHook(id: string): Promise<boolean> {
    return this.hooks.deleteHook(id);
  }

  getHook(id: string): Promise<Hook | undefined> {
    return this.hooks.getHook(id);
  }

  getHookByName(owner: string, name: string): Promise<Hook | undefined> {
    return this.hooks.getHookByName(owner, name);
  }

  listHooks(owner: string, page?: PageRequest): Promise<Hook[]> {
    return this.hooks.listHooks(owner, page);
  }

  allHooks(): Promise<Hook[]> {
    return this.hooks.allHooks();
  }

  async addUser(user: UserRecord): Promise<boolean> {
    const r = await this.db.pool.query(
      'INSERT INTO users (name, created, scopes, permissions) VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING',
      [
        user.name,
        user.created,
        user.scopes === undefined ? null : JSON.stringify(user.scopes),
        user.permissions?.length ? JSON.stringify(user.permissions) : null,
      ],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async getUser(name: string): Promise<UserRecord | undefined> {
    const { rows } = await this.db.pool.query(
      'SELECT name, created, scopes, permissions FROM users WHERE name = $1',
      [name],
    );
    return rows[0] && userOf(rows[0]);
  }

  async listUsers(): Promise<UserRecord[]> {
    return (
      await this.db.pool.query('SELECT name, created, scopes, permissions FROM users ORDER BY name')
    ).rows.map(userOf);
  }

  async setUserPermissions(name: string, permissions: string[]): Promise<boolean> {
    const r = await this.db.pool.query('UPDATE users SET permissions = $1 WHERE name = $2', [
      JSON.stringify(permissions),
      name,
    ]);
    return (r.rowCount ?? 0) > 0;
  }

  async setUserScopes(name: string, scopes: string[]): Promise<boolean> {
    const r = await this.db.pool.query('UPDATE users SET scopes = $1 WHERE name = $2', [
      JSON.stringify(scopes),
      name,
    ]);
    return (r.rowCount ?? 0) > 0;
  }

  /**
   * Removes the user, their tokens (by cascade), their hooks of both kinds and those hooks'
   * deliveries and secrets, in one transaction: the running instances drop the hooks from their
   * indexes (notified) and need not clean up after whoever removed the user.
   */
  async removeUser(name: string): Promise<boolean> {
    return this.db.transaction(async (c) => {
      for (const p of ['', 'eph_']) {
        await c.query(
          `DELETE FROM ${p}delivery_attempts a USING ${p}deliveries d WHERE d.owner = $1 AND a.delivery_id = d.id`,
          [name],
        );
        await c.query(`DELETE FROM ${p}deliveries WHERE owner = $1`, [name]);
        await c.query(
          `DELETE FROM ${p}hook_secrets s USING ${p}hooks h WHERE h.owner = $1 AND s.hook_id = h.id`,
          [name],
        );
        await c.query(`DELETE FROM ${p}hooks WHERE owner = $1`, [name]);
      }
      return ((await c.query('DELETE FROM users WHERE name = $1', [name])).rowCount ?? 0) > 0;
    });
  }

  async addToken(token: TokenRecord): Promise<void> {
    await this.db.pool.query(
      'INSERT INTO tokens (id, "user", hash, label, created) VALUES ($1, $2, $3, $4, $5)',
      [token.id, token.user, token.hash, token.label, token.created],
    );
  }

  async getToken(id: string): Promise<TokenRecord | undefined> {
    const { rows } = await this.db.pool.query<PgTokenRow>(
      `SELECT ${PG_TOKEN_COLUMNS} FROM tokens WHERE id = $1`,
      [id],
    );
    return rows[0] && pgTokenOf(rows[0]);
  }

  async listTokens(user?: string): Promise<TokenRecord[]> {
    const { rows } =
      user === undefined
        ? await this.db.pool.query<PgTokenRow>(`SELECT ${PG_TOKEN_COLUMNS} FROM tokens ORDER BY created, id`)
        : await this.db.pool.query<PgTokenRow>(
            `SELECT ${PG_TOKEN_COLUMNS} FROM tokens WHERE "user" = $1 ORDER BY created, id`,
            [user],
          );
    return rows.map(pgTokenOf);
  }

  async revokeToken(id: string): Promise<boolean> {
    return ((await this.db.pool.query('DELETE FROM tokens WHERE id = $1', [id])).rowCount ?? 0) > 0;
  }

  async touchToken(id: string, at: string): Promise<void> {
    await this.db.pool.query('UPDATE tokens SET last_used = $1 WHERE id = $2', [at, id]);
  }

  /** Runs `fn` under the start-up advisory lock: instances starting together take turns. */
  exclusively<T>(fn: () => Promise<T>): Promise<T> {
    return this.db.exclusively(() => fn());
  }

  /**
   * Follows hook changes committed by any process on the database, this one's own included (the
   * watcher skips a version its index holds already, so each instance applies a change once).
   * Notifications arriving in one event-loop turn are fetched with one query; after a lost
   * connection `resync` is called, since notifications sent meanwhile are lost. Resolves once
   * listening.
   */
  async watchHookChanges(watcher: HookChangeWatcher): Promise<() => void> {
    const listener = this.db.listener;
    let pending = new Set<string>();
    let scheduled = false;
    let chain = Promise.resolve();
    let stopped = false;
    const flush = (): void => {
      scheduled = false;
      const ids = [...pending];
      pending = new Set();
      chain = chain
        .then(async () => {
          const found = await this.fetchHooks(ids);
          const deleted = ids.filter((id) => !found.has(id));
          watcher.changed([...found.values()], deleted);
        })
        .catch((err: unknown) => {
          watcher.failed?.(err);
          // The database did not answer: the same hooks are fetched again a little later.
          if (stopped) return;
          for (const id of ids) pending.add(id);
          if (!scheduled) {
            scheduled = true;
            setTimeout(flush, RETRY_FETCH_MS).unref();
          }
        });
    };
    const offChange = listener.on(CHANGES_CHANNEL, (payload) => {
      const msg = parseChange(payload);
      if (!msg) return;
      if (msg.k === 'secret') {
        watcher.secretChanged?.(msg.id);
        return;
      }
      if (msg.k === 'user') {
        watcher.userChanged?.(msg.id);
        return;
      }
      pending.add(msg.id);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
    const offReconnect = listener.onReconnect(() => {
      pending = new Set();
      chain = chain.then(() => watcher.resync()).catch((err: unknown) => watcher.failed?.(err));
    });
    await listener.start();
    return () => {
      stopped = true;
      offChange();
      offReconnect();
    };
  }

  /** The current version of each hook, from whichever table holds it (the newer if both). */
  private async fetchHooks(ids: string[]): Promise<Map<string, Hook>> {
    const { rows } = await this.db.pool.query<{ doc: string }>(
      'SELECT doc FROM hooks WHERE id = ANY($1::text[]) UNION ALL SELECT doc FROM eph_hooks WHERE id = ANY($1::text[])',
      [ids],
    );
    const out = new Map<string, Hook>();
    for (const r of rows) {
      const h = hookFromDocument(this.opts.secrets ?? PLAIN_SECRETS, r.doc);
      const seen = out.get(h.Id);
      // A replace that flips Persist writes the new table before it deletes from the old one.
      if (!seen || seen.Modified < h.Modified) out.set(h.Id, h);
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.opts.ownsDatabase !== false) await this.db.close();
  }
}

function parseChange(payload: string): { k: 'hook' | 'secret' | 'user'; id: string } | undefined {
  try {
    const m = JSON.parse(payload) as { k?: unknown; id?: unknown };
    if ((m.k === 'hook' || m.k === 'secret' || m.k === 'user') && typeof m.id === 'string')
      return { k: m.k, id: m.id };
  } catch {
    // not ours
  }
  return undefined;
}
