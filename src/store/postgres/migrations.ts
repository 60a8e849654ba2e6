import { SEALED_MARKER_SQL } from './pg-sealed-marker-sql.js';
import { AGGREGATES_MIGRATION_SQL } from './postgres-aggregates.js';
import { ROLLUP_TRIGGERS_V11_SQL } from './postgres-rollup-triggers.js';

/**
 * The PostgreSQL schema, as numbered versions applied in order (each in its own transaction, under
 * an advisory lock so that instances starting together do not race); `schema_migrations` records
 * which ran. Append, never edit: a database written by an older hookd must still open.
 *
 * Columns that sort or page (Ids, user names, token times) use the "C" collation, so that order
 * is by code point exactly as in SQLite and in memory, whatever the database's locale.
 * `Persist: false` hooks and their deliveries live in the UNLOGGED `eph_*` tables: shared by
 * the instances (a cluster is one service), cheaper to write, and gone with a crash of the
 * database or a restart of the whole cluster (docs/DECISIONS.md "Cluster (PostgreSQL)").
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const hookTable = (name: string, unlogged: boolean) => `
  CREATE ${unlogged ? 'UNLOGGED ' : ''}TABLE ${name} (
    id TEXT COLLATE "C" PRIMARY KEY,
    owner TEXT COLLATE "C" NOT NULL,
    doc TEXT NOT NULL,
    modified TEXT NOT NULL
  );
  CREATE INDEX ${name}_by_owner ON ${name} (owner, id);
  CREATE TRIGGER ${name}_notify AFTER INSERT OR UPDATE OR DELETE ON ${name}
    FOR EACH ROW EXECUTE FUNCTION hookd_notify_hook();
`;

// Deliveries are the outbox and the delivery log at once. `seq` keeps insertion order (pruning
// by age walks from the oldest row); `lease_owner` is the instance that holds a pending delivery
// (null: nobody, free to claim). Bodies are bytes: PostgreSQL text cannot hold U+0000.
const deliveryTables = (prefix: string, unlogged: boolean) => {
  const u = unlogged ? 'UNLOGGED ' : '';
  return `
  CREATE ${u}TABLE ${prefix}deliveries (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT COLLATE "C" NOT NULL UNIQUE,
    hook_id TEXT COLLATE "C" NOT NULL,
    owner TEXT NOT NULL,
    hook_type SMALLINT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    round_start INTEGER NOT NULL,
    created BIGINT NOT NULL,
    next_attempt BIGINT,
    last_status INTEGER,
    last_error TEXT,
    t_method TEXT NOT NULL,
    t_path TEXT NOT NULL,
    t_status INTEGER,
    method TEXT NOT NULL,
    url TEXT NOT NULL,
    headers TEXT NOT NULL,
    body BYTEA,
    lease_owner TEXT COLLATE "C"
  );
  CREATE INDEX ${prefix}deliveries_by_hook ON ${prefix}deliveries (hook_id, id);
  CREATE INDEX ${prefix}deliveries_leased ON ${prefix}deliveries (lease_owner) WHERE status = 'pending';
  CREATE ${u}TABLE ${prefix}delivery_attempts (
    delivery_id TEXT COLLATE "C" NOT NULL,
    attempt INTEGER NOT NULL,
    hook_id TEXT COLLATE "C" NOT NULL,
    time BIGINT NOT NULL,
    status INTEGER,
    latency_ms DOUBLE PRECISION NOT NULL,
    error TEXT,
    response BYTEA,
    PRIMARY KEY (delivery_id, attempt)
  );
  CREATE ${u}TABLE ${prefix}hook_secrets (
    hook_id TEXT COLLATE "C" PRIMARY KEY,
    secret TEXT NOT NULL,
    previous TEXT,
    previous_valid_until BIGINT
  );
  CREATE TRIGGER ${prefix}hook_secrets_notify AFTER INSERT OR UPDATE OR DELETE ON ${prefix}hook_secrets
    FOR EACH ROW EXECUTE FUNCTION hookd_notify_secret();
  `;
};

/** The channel every hook and signing-secret change is announced on (payload `{"k","id"}`). */
export const CHANGES_CHANNEL = 'hookd_changes';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'users, tokens, hooks, deliveries, instances',
    sql: `
  CREATE TABLE users (
    name TEXT COLLATE "C" PRIMARY KEY,
    created TEXT NOT NULL
  );
  CREATE TABLE tokens (
    id TEXT COLLATE "C" PRIMARY KEY,
    "user" TEXT COLLATE "C" NOT NULL REFERENCES users(name) ON DELETE CASCADE,
    hash TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    created TEXT COLLATE "C" NOT NULL
  );
  CREATE INDEX tokens_by_user ON tokens ("user", created, id);

  -- Every instance LISTENs on this channel: a change made through any of them (or by hookd user
  -- remove, or by hand) reaches every match index.
  CREATE FUNCTION hookd_notify_hook() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'DELETE' THEN
      PERFORM pg_notify('${CHANGES_CHANNEL}', json_build_object('k', 'hook', 'id', OLD.id)::text);
    ELSE
      PERFORM pg_notify('${CHANGES_CHANNEL}', json_build_object('k', 'hook', 'id', NEW.id)::text);
    END IF;
    RETURN NULL;
  END $$;
  CREATE FUNCTION hookd_notify_secret() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'DELETE' THEN
      PERFORM pg_notify('${CHANGES_CHANNEL}', json_build_object('k', 'secret', 'id', OLD.hook_id)::text);
    ELSE
      PERFORM pg_notify('${CHANGES_CHANNEL}', json_build_object('k', 'secret', 'id', NEW.hook_id)::text);
    END IF;
    RETURN NULL;
  END $$;
  ${hookTable('hooks', false)}
  ${hookTable('eph_hooks', true)}
  ${deliveryTables('', false)}
  ${deliveryTables('eph_', true)}

  -- The instances of the cluster. An instance's claim on the deliveries it holds lasts until
  -- lease_until (database time: the instances' clocks do not matter); it renews it with every
  -- heartbeat, and the others take its deliveries over once it has run out.
  CREATE TABLE hookd_instances (
    id TEXT COLLATE "C" PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    lease_until TIMESTAMPTZ NOT NULL
  );
  `,
  },
  {
    version: 2,
    name: 'the user who made the triggering request',
    sql: `
  ALTER TABLE deliveries ADD COLUMN t_user TEXT;
  ALTER TABLE eph_deliveries ADD COLUMN t_user TEXT;
  `,
  },
  {
    version: 3,
    name: 'users: scopes, change notifications',
    // NULL scopes: a user from before; the daemon's start-up gives it the default (docs/DECISIONS.md
    // "Scopes"). Every instance caches users' scopes: a change made anywhere is announced.
    sql: `
  ALTER TABLE users ADD COLUMN scopes TEXT;
  CREATE FUNCTION hookd_notify_user() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'DELETE' THEN
      PERFORM pg_notify('${CHANGES_CHANNEL}', json_build_object('k', 'user', 'id', OLD.name)::text);
    ELSE
      PERFORM pg_notify('${CHANGES_CHANNEL}', json_build_object('k', 'user', 'id', NEW.name)::text);
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER users_notify AFTER INSERT OR UPDATE OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION hookd_notify_user();
  `,
  },
  {
    version: 4,
    name: 'notification endpoints',
    sql: `
  CREATE TABLE notification_endpoints (
    id TEXT COLLATE "C" PRIMARY KEY,
    owner TEXT COLLATE "C" NOT NULL,
    doc TEXT NOT NULL
  );
  `,
  },
  {
    version: 5,
    name: 'idempotency keys, delivery trace context, rate-limit wait',
    // See the SQLite migration of the same purpose.
    sql: `
  CREATE TABLE idempotency_keys (
    owner TEXT COLLATE "C" NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    fingerprint TEXT NOT NULL,
    status INTEGER,
    content_type TEXT,
    body TEXT,
    created BIGINT NOT NULL,
    expires BIGINT NOT NULL,
    PRIMARY KEY (owner, key)
  );
  CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires);
  ALTER TABLE deliveries ADD COLUMN trace_parent TEXT;
  ALTER TABLE eph_deliveries ADD COLUMN trace_parent TEXT;
  ALTER TABLE delivery_attempts ADD COLUMN rate_wait_ms DOUBLE PRECISION;
  ALTER TABLE eph_delivery_attempts ADD COLUMN rate_wait_ms DOUBLE PRECISION;
  `,
  },
  {
    version: 6,
    name: 'console rollups',
    sql: AGGREGATES_MIGRATION_SQL,
  },
  {
    version: 7,
    name: 'hook names, listener attempts',
    // See the SQLite migration of the same purpose. A listener attempt of a
    // `Persist: false` hook's delivery is kept here too and goes with it (trigger on both tables).
    sql: `
  ALTER TABLE hooks ADD COLUMN name TEXT COLLATE "C";
  ALTER TABLE eph_hooks ADD COLUMN name TEXT COLLATE "C";
  CREATE UNIQUE INDEX hooks_owner_name ON hooks (owner, name) WHERE name IS NOT NULL;
  CREATE UNIQUE INDEX eph_hooks_owner_name ON eph_hooks (owner, name) WHERE name IS NOT NULL;
  CREATE TABLE listener_attempts (
    delivery_id TEXT COLLATE "C" NOT NULL,
    seq INTEGER NOT NULL,
    hook_id TEXT COLLATE "C" NOT NULL,
    listener TEXT NOT NULL,
    time BIGINT NOT NULL,
    status INTEGER,
    latency_ms DOUBLE PRECISION NOT NULL,
    error TEXT,
    response TEXT,
    PRIMARY KEY (delivery_id, seq)
  );
  CREATE FUNCTION hookd_listener_attempts_gone() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    DELETE FROM listener_attempts WHERE delivery_id = OLD.id;
    RETURN NULL;
  END $$;
  CREATE TRIGGER deliveries_listener_attempts_gone AFTER DELETE ON deliveries
    FOR EACH ROW EXECUTE FUNCTION hookd_listener_attempts_gone();
  CREATE TRIGGER eph_deliveries_listener_attempts_gone AFTER DELETE ON eph_deliveries
    FOR EACH ROW EXECUTE FUNCTION hookd_listener_attempts_gone();
  `,
  },
  {
    version: 8,
    name: 'token last used',
    // See the SQLite migration of the same purpose.
    sql: 'ALTER TABLE tokens ADD COLUMN last_used TEXT;',
  },
  {
    version: 9,
    name: 'users: permissions',
    // See the SQLite migration of the same purpose. The users trigger of version 3
    // announces a change to every instance already.
    sql: `
  ALTER TABLE users ADD COLUMN permissions TEXT;
  `,
  },
  {
    version: 10,
    name: 'delivery log filter indexes',
    // See the SQLite migration of the same purpose; `Persist: false` hooks have the log too.
    sql: `
  CREATE INDEX deliveries_by_hook_status ON deliveries (hook_id, status, id);
  CREATE INDEX deliveries_by_hook_last_status ON deliveries (hook_id, last_status, id);
  CREATE INDEX eph_deliveries_by_hook_status ON eph_deliveries (hook_id, status, id);
  CREATE INDEX eph_deliveries_by_hook_last_status ON eph_deliveries (hook_id, last_status, id);
  `,
  },
  {
    version: 11,
    name: 'rollup triggers linear in the batch',
    // A cached nested loop over two transition tables made large batches quadratic.
    sql: ROLLUP_TRIGGERS_V11_SQL,
  },
  {
    version: 12,
    name: 'deliveries: transform input',
    // See the SQLite migration of the same purpose.
    sql: `
  ALTER TABLE deliveries ADD COLUMN transform_input TEXT;
  ALTER TABLE eph_deliveries ADD COLUMN transform_input TEXT;
  `,
  },
  {
    version: 13,
    name: 'secrets: sealed marker',
    // See the SQLite migration of the same purpose.
    sql: SEALED_MARKER_SQL,
  },
  {
    version: 14,
    name: 'delivery log filter indexes: partial',
    // See the SQLite migrations of the same purpose: a success writes no entry in either index.
    sql: `
  DROP INDEX deliveries_by_hook_status;
  DROP INDEX deliveries_by_hook_last_status;
  DROP INDEX eph_deliveries_by_hook_status;
  DROP INDEX eph_deliveries_by_hook_last_status;
  CREATE INDEX deliveries_by_hook_status ON deliveries (hook_id, status, id) WHERE status <> 'succeeded';
  CREATE INDEX deliveries_by_hook_last_status ON deliveries (hook_id, last_status, id)
    WHERE last_status NOT BETWEEN 200 AND 299;
  CREATE INDEX eph_deliveries_by_hook_status ON eph_deliveries (hook_id, status, id)
    WHERE status <> 'succeeded';
  CREATE INDEX eph_deliveries_by_hook_last_status ON eph_deliveries (hook_id, last_status, id)
    WHERE last_status NOT BETWEEN 200 AND 299;
  `,
  },
];
