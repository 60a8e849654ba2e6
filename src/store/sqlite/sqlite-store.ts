import { chmodSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Hook } from '../../hook/index.js';
import { internHook } from '../../hook/index.js';
import { localFile } from '../coordination.js';
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
import type { Coordination, PageRequest, Store, TokenRecord, UserRecord } from '../store.js';
import { userOf } from '../user-row.js';
import { Checkpointer } from './checkpointer.js';
import { othersChanges } from './external-changes.js';
import { MIGRATIONS } from './migrations.js';
import { checkpointWal, WAL_SIZE_LIMIT_BYTES } from './wal-checkpoint.js';

export interface SqliteStoreOptions {
  /**
   * `NORMAL` (default) survives a crash of hookd (kill -9) in WAL mode; `FULL` also survives a
   * power loss, at about 2.5× the cost per commit (docs/BENCHMARKS.md).
   */
  synchronous?: 'NORMAL' | 'FULL';
  /**
   * Who checkpoints the WAL: `commit` (default), SQLite itself inside whichever commit crosses its
   * threshold; `thread`, a thread of the store's own (checkpointer.ts), never inside a commit;
   * `writer`, the SQLite writer thread (src/store/sqlite-writer/) between its batches, which is the
   * only place a checkpoint can keep up with writes that never pause.
   */
  checkpoint?: 'commit' | 'thread' | 'writer';
  /** How secrets are written (the daemon's sealer; give SqliteDeliveryStore the same). Default: as they are. */
  secrets?: SecretCodec;
}

type Row = Record<string, unknown>;

/** The embedded default store: one SQLite file in the data dir, WAL mode. */
const TOKEN_COLUMNS = 'id, user, hash, label, created, last_used AS lastUsed';
type TokenRow = Omit<TokenRecord, 'lastUsed'> & { lastUsed: string | null };

/** A token from its row: `lastUsed` only when recorded. */
function tokenOf(r: TokenRow): TokenRecord {
  const { lastUsed, ...t } = r;
  return lastUsed === null ? t : { ...t, lastUsed };
}

export class SqliteStore implements Store, CredentialTable {
  readonly credentialKind = 'hook';
  readonly kind = 'sqlite';
  readonly coordination: Coordination = localFile((onChange) => this.watchExternalChanges(onChange));
  readonly db: Database.Database;
  /** How durable a commit is, for any other connection that writes this file. */
  readonly synchronous: 'NORMAL' | 'FULL';
  private readonly stmts;
  private readonly checkpointer: Checkpointer | undefined;
  private readonly secrets: SecretCodec;
  private readonly putHookTx: (hook: Hook, firstSecret: HookSecretRecord | undefined) => void;
  private credentialChanges = 0;
  private seenOthers = -1;
  /** Changes of users, tokens and hooks made by other connections (external-changes.ts). */
  private readonly others: () => number;

  constructor(
    readonly file: string,
    opts: SqliteStoreOptions = {},
  ) {
    mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    // Hooks and tokens are private: the file is readable by hookd's user only.
    try {
      chmodSync(file, 0o600);
    } catch {
      // A read-only or foreign-owned file is reported by the first write instead.
    }
    this.db.pragma('journal_mode = WAL');
    this.synchronous = opts.synchronous ?? 'NORMAL';
    this.db.pragma(`synchronous = ${this.synchronous}`);
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    this.migrate();
    this.others = othersChanges(this.db);
    // After a burst the WAL is cut back when it starts over, rather than kept at its largest.
    this.db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    const checkpoint = opts.checkpoint ?? 'commit';
    if (checkpoint !== 'commit') this.db.pragma('wal_autocheckpoint = 0');
    if (checkpoint === 'thread') this.checkpointer = new Checkpointer(file, () => this.catchUp());
    const db = this.db;
    this.secrets = opts.secrets ?? PLAIN_SECRETS;
    this.stmts = {
      putHook: db.prepare(
        'INSERT INTO hooks (id, owner, doc, modified, name) VALUES (@id, @owner, @doc, @modified, @name) ' +
          'ON CONFLICT(id) DO UPDATE SET owner = excluded.owner, doc = excluded.doc, modified = excluded.modified, name = excluded.name',
      ),
      getHookByName: db.prepare('SELECT doc FROM hooks WHERE owner = ? AND name = ?'),
      deleteHook: db.prepare('DELETE FROM hooks WHERE id = ?'),
      getHook: db.prepare('SELECT doc FROM hooks WHERE id = ?'),
      listHooks: db.prepare('SELECT doc FROM hooks WHERE owner = ? AND id > ? ORDER BY id LIMIT ?'),
      allHooks: db.prepare('SELECT doc FROM hooks').pluck(),
      addUser: db.prepare(
        'INSERT OR IGNORE INTO users (name, created, scopes, permissions) VALUES (?, ?, ?, ?)',
      ),
      getUser: db.prepare('SELECT name, created, scopes, permissions FROM users WHERE name = ?'),
      listUsers: db.prepare('SELECT name, created, scopes, permissions FROM users ORDER BY name'),
      setUserScopes: db.prepare('UPDATE users SET scopes = ? WHERE name = ?'),
      setUserPermissions: db.prepare('UPDATE users SET permissions = ? WHERE name = ?'),
      removeUser: db.prepare('DELETE FROM users WHERE name = ?'),
      removeUserHooks: db.prepare('DELETE FROM hooks WHERE owner = ?'),
      addToken: db.prepare(
        'INSERT INTO tokens (id, user, hash, label, created) VALUES (@id, @user, @hash, @label, @created)',
      ),
      getToken: db.prepare(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE id = ?`),
      listTokens: db.prepare(`SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created, id`),
      touchToken: db.prepare('UPDATE tokens SET last_used = ? WHERE id = ?'),
      listUserTokens: db.prepare(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE user = ? ORDER BY created, id`),
      revokeToken: db.prepare('DELETE FROM tokens WHERE id = ?'),
      credentialRows: db.prepare(
        `SELECT id, id AS hookId, doc AS text FROM hooks WHERE id > ? AND ${HOOK_DOC_WITH_CREDENTIALS('doc', 'instr')} ORDER BY id LIMIT ?`,
      ),
      replaceDoc: db.prepare('UPDATE hooks SET doc = ? WHERE id = ? AND doc = ?'),
      insertSecret: db.prepare(
        'INSERT INTO hook_secrets (hook_id, secret, previous, previous_valid_until) VALUES (?, ?, ?, ?)',
      ),
    };
    this.putHookTx = db.transaction((hook: Hook, firstSecret: HookSecretRecord | undefined) => {
      if (firstSecret !== undefined) {
        const sealed = sealRecord(this.secrets, firstSecret);
        this.stmts.insertSecret.run(
          sealed.hookId,
          sealed.secret,
          sealed.previous,
          firstSecret.previousValidUntil,
        );
      }
      this.stmts.putHook.run({
        id: hook.Id,
        owner: hook.Owner,
        doc: hookDocument(this.secrets, hook),
        modified: hook.Modified,
        name: hook.Name ?? null,
      });
    });
  }

  private migrate(): void {
    const current = this.db.pragma('user_version', { simple: true }) as number;
    for (let v = current; v < MIGRATIONS.length; v++) {
      const step = MIGRATIONS[v]!;
      this.db.transaction(() => {
        this.db.exec(step);
        this.db.pragma(`user_version = ${v + 1}`);
      })();
    }
  }

  async putHook(hook: Hook, firstSecret?: HookSecretRecord): Promise<void> {
    try {
      this.putHookTx(hook, firstSecret);
    } catch (err) {
      if (hook.Name !== undefined && isUniqueViolation(err)) throw nameConflict(hook.Name);
      throw err;
    }
  }

  async getHookByName(owner: string, name: string): Promise<Hook | undefined> {
    const row = this.stmts.getHookByName.get(owner, name) as Row | undefined;
    return row ? hookFromDocument(this.secrets, row.doc as string) : undefined;
  }

  async deleteHook(id: string): Promise<boolean> {
    return this.stmts.deleteHook.run(id).changes > 0;
  }

  async getHook(id: string): Promise<Hook | undefined> {
    const row = this.stmts.getHook.get(id) as Row | undefined;
    return row ? hookFromDocument(this.secrets, row.doc as string) : undefined;
  }

  async listHooks(owner: string, page: PageRequest = {}): Promise<Hook[]> {
    const rows = this.stmts.listHooks.all(owner, page.after ?? '', page.limit ?? -1) as Row[];
    return rows.map((r) => hookFromDocument(this.secrets, r.doc as string));
  }

  /**
   * Every hook, for the match index: at 100,000 hooks this is half of start-up (docs/BENCHMARKS.md
   * "Size"). Each row's text is parsed as it is read and the hook's common values are shared at
   * once, so the texts and the replaced values die young instead of being alive all together and
   * reaching the old generation: with `.all()` the daemon stayed about 40 MB larger after start-up,
   * at the same speed.
   */
  async allHooks(): Promise<Hook[]> {
    const out: Hook[] = [];
    // A scan reads each page once, so caching them is no use; with the default cache (16 MB)
    // the pages stayed in memory after start-up: 15 MB more RSS at 100,000 hooks.
    const cacheSize = this.db.pragma('cache_size', { simple: true }) as number;
    this.db.pragma('cache_size = -512');
    try {
      for (const doc of this.stmts.allHooks.iterate() as IterableIterator<string>) {
        out.push(internHook(hookFromDocument(this.secrets, doc)));
      }
    } finally {
      this.db.pragma(`cache_size = ${cacheSize}`);
    }
    return out;
  }

  async credentialRows(after: string, limit: number): Promise<CredentialRow[]> {
    return this.stmts.credentialRows.all(after, limit) as CredentialRow[];
  }

  async replaceCredentialRow(row: CredentialRow, text: string): Promise<boolean> {
    return this.stmts.replaceDoc.run(text, row.id, row.text).changes > 0;
  }

  /**
   * Moves with this connection's own changes of tokens and users, and with every change another
   * connection made to users, tokens or hooks (`hookd user …` or `hookd token …` writing the file
   * beside the daemon), which may have changed them.
   */
  credentialStamp(): number {
    const others = this.others();
    if (others !== this.seenOthers) {
      this.seenOthers = others;
      this.credentialChanges++;
    }
    return this.credentialChanges;
  }

  async addUser(user: UserRecord): Promise<boolean> {
    this.credentialChanges++;
    const scopes = user.scopes === undefined ? null : JSON.stringify(user.scopes);
    return this.stmts.addUser.run(user.name, user.created, scopes, permissionsText(user)).changes > 0;
  }

  async getUser(name: string): Promise<UserRecord | undefined> {
    const row = this.stmts.getUser.get(name) as Row | undefined;
    return row && userOf(row);
  }

  async listUsers(): Promise<UserRecord[]> {
    return (this.stmts.listUsers.all() as Row[]).map(userOf);
  }

  async setUserScopes(name: string, scopes: string[]): Promise<boolean> {
    this.credentialChanges++;
    return this.stmts.setUserScopes.run(JSON.stringify(scopes), name).changes > 0;
  }

  async setUserPermissions(name: string, permissions: string[]): Promise<boolean> {
    this.credentialChanges++;
    return this.stmts.setUserPermissions.run(JSON.stringify(permissions), name).changes > 0;
  }

  async removeUser(name: string): Promise<boolean> {
    this.credentialChanges++;
    return this.db.transaction(() => {
      this.stmts.removeUserHooks.run(name);
      return this.stmts.removeUser.run(name).changes > 0;
    })();
  }

  async addToken(token: TokenRecord): Promise<void> {
    this.credentialChanges++;
    this.stmts.addToken.run(token);
  }

  async getToken(id: string): Promise<TokenRecord | undefined> {
    const r = this.stmts.getToken.get(id) as TokenRow | undefined;
    return r && tokenOf(r);
  }

  async listTokens(user?: string): Promise<TokenRecord[]> {
    return (user === undefined ? this.stmts.listTokens.all() : this.stmts.listUserTokens.all(user)).map((r) =>
      tokenOf(r as TokenRow),
    );
  }

  async revokeToken(id: string): Promise<boolean> {
    this.credentialChanges++;
    return this.stmts.revokeToken.run(id).changes > 0;
  }

  async touchToken(id: string, at: string): Promise<void> {
    this.stmts.touchToken.run(at, id);
  }

  /**
   * Polls the changes other connections made to users, tokens and hooks; the daemon's own writer
   * thread, which writes deliveries, moves nothing here.
   */
  watchExternalChanges(onChange: () => void, intervalMs = 1000): () => void {
    let last = this.others();
    const timer = setInterval(() => {
      if (!this.db.open) return;
      const now = this.others();
      if (now !== last) {
        last = now;
        onChange();
      }
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** A checkpoint on the writing connection, between two of its transactions: it reaches the WAL's end. */
  private catchUp(): void {
    try {
      if (this.db.open) checkpointWal(this.db);
    } catch {
      // A reader's lock: the thread says so again at its next interval.
    }
  }

  async close(): Promise<void> {
    await this.checkpointer?.stop();
    if (this.db.open) this.db.close();
  }
}

/** The permissions column: NULL for none. */
export function permissionsText(user: UserRecord): string | null {
  return user.permissions?.length ? JSON.stringify(user.permissions) : null;
}
