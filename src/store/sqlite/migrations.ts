import { STORE_CHANGES_MIGRATION } from './external-changes.js';
import { AGGREGATES_MIGRATION } from './sqlite-aggregates.js';
import { SEALED_MARKER_MIGRATION } from './sqlite-sealed-marker.js';

/**
 * Schema versions, applied in order inside a transaction each; `PRAGMA user_version` records how
 * many ran. Append, never edit: a data dir written by an older hookd must still open.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE users (
    name TEXT PRIMARY KEY,
    created TEXT NOT NULL
  );
  CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    user TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
    hash TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    created TEXT NOT NULL
  );
  CREATE TABLE hooks (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    doc TEXT NOT NULL,
    modified TEXT NOT NULL
  );
  CREATE INDEX hooks_by_owner ON hooks(owner, id);
  `,
  // Deliveries (the outbox and the delivery log), their attempts, and signing secrets. Times are
  // epoch ms. Delivery Ids sort by creation time; `seq` keeps the table in insertion order, so
  // inserts append and age pruning walks from the oldest row.
  `
  CREATE TABLE deliveries (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    hook_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    hook_type INTEGER NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    round_start INTEGER NOT NULL,
    created INTEGER NOT NULL,
    next_attempt INTEGER,
    last_status INTEGER,
    last_error TEXT,
    t_method TEXT NOT NULL,
    t_path TEXT NOT NULL,
    t_status INTEGER,
    method TEXT NOT NULL,
    url TEXT NOT NULL,
    headers TEXT NOT NULL,
    body TEXT
  );
  CREATE INDEX deliveries_by_hook ON deliveries(hook_id, id);
  CREATE TABLE delivery_attempts (
    delivery_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    hook_id TEXT NOT NULL,
    time INTEGER NOT NULL,
    status INTEGER,
    latency_ms REAL NOT NULL,
    error TEXT,
    response TEXT,
    PRIMARY KEY (delivery_id, attempt)
  ) WITHOUT ROWID;
  CREATE TABLE hook_secrets (
    hook_id TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    previous TEXT,
    previous_valid_until INTEGER
  );
  `,
  // Who made the request that fired a delivery (the identity provider's user; null: anonymous).
  `
  ALTER TABLE deliveries ADD COLUMN t_user TEXT;
  `,
  // Users' scopes, a JSON list. NULL for users from before: the daemon's start-up gives
  // them the default and logs whose hooks now fire less (docs/DECISIONS.md "Scopes").
  `
  ALTER TABLE users ADD COLUMN scopes TEXT;
  `,
  // Notification endpoints (src/notifications/): where users and the operator are told of
  // disabled hooks, dead letters and circuit breakers. The document is the API's resource.
  `
  CREATE TABLE notification_endpoints (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    doc TEXT NOT NULL
  );
  `,
  // Idempotency-Key answers of POST /_hookd/report (per user and key, kept 24 h by
  // default); a delivery's trace context (W3C traceparent of its fire span), so that its attempts
  // stay in the triggering request's trace after a restart; the rate-limit wait before an attempt.
  `
  CREATE TABLE idempotency_keys (
    owner TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status INTEGER,
    content_type TEXT,
    body TEXT,
    created INTEGER NOT NULL,
    expires INTEGER NOT NULL,
    PRIMARY KEY (owner, key)
  );
  CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys(expires);
  ALTER TABLE deliveries ADD COLUMN trace_parent TEXT;
  ALTER TABLE delivery_attempts ADD COLUMN rate_wait_ms REAL;
  `,
  // The web console's rollups and their triggers (src/store/sqlite/sqlite-aggregates.ts).
  AGGREGATES_MIGRATION,
  // A hook's optional Name, unique per owner; and the attempts of `hookctl listen`
  // (src/listen/), apart from the endpoint's attempts so that the console's rollups and the
  // retry state never count them. They go with their delivery (pruning, hook deletion).
  `
  ALTER TABLE hooks ADD COLUMN name TEXT;
  CREATE UNIQUE INDEX hooks_owner_name ON hooks(owner, name) WHERE name IS NOT NULL;
  CREATE TABLE listener_attempts (
    delivery_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    hook_id TEXT NOT NULL,
    listener TEXT NOT NULL,
    time INTEGER NOT NULL,
    status INTEGER,
    latency_ms REAL NOT NULL,
    error TEXT,
    response TEXT,
    PRIMARY KEY (delivery_id, seq)
  ) WITHOUT ROWID;
  CREATE TRIGGER listener_attempts_gone AFTER DELETE ON deliveries BEGIN
    DELETE FROM listener_attempts WHERE delivery_id = OLD.id;
  END;
  `,
  // When each token was last used (the console's Users page), to within a minute.
  `ALTER TABLE tokens ADD COLUMN last_used TEXT;`,
  // What the admin granted a user beyond owning hooks, a JSON list (`["report"]`: may
  // report requests made by anyone). NULL: none.
  `
  ALTER TABLE users ADD COLUMN permissions TEXT;
  `,
  // The delivery log's selective filters (a status, one receiver status) as index range
  // scans that also give the rows newest first; on `(hook_id, id)` alone they read the whole hook.
  `
  CREATE INDEX deliveries_by_hook_status ON deliveries(hook_id, status, id);
  CREATE INDEX deliveries_by_hook_last_status ON deliveries(hook_id, last_status, id);
  `,
  // The event a failed Transform was given (JSON text), so that a redelivery runs the hook's
  // Transform again on it; NULL for every other delivery.
  `ALTER TABLE deliveries ADD COLUMN transform_input TEXT;`,
  // The console's rollups are counted by the writer and added once per batch (sqlite-rollups.ts):
  // the row triggers of the rollups' migration would count every row a second time. The rollup
  // tables and what they hold stay; so does the trigger on hooks.
  `
  DROP TRIGGER stats_attempt;
  DROP TRIGGER stats_outcome_insert;
  DROP TRIGGER stats_outcome_update;
  `,
  // "Every value sealed under key K", so that a start under K skips the re-sealing walk; the
  // triggers clear it on a write under another key, by this hookd or an older one.
  SEALED_MARKER_MIGRATION,
  // The status filters' indexes hold only the rows they serve: a delivery without a receiver
  // status yet is in neither receiver-status range, and a succeeded one (most of them) is found
  // by reading `(hook_id, id)` newest first. So a new delivery writes one entry and its success
  // deletes it, rather than an entry in each written and then moved in both.
  `
  DROP INDEX deliveries_by_hook_status;
  DROP INDEX deliveries_by_hook_last_status;
  CREATE INDEX deliveries_by_hook_status ON deliveries(hook_id, status, id) WHERE status <> 'succeeded';
  CREATE INDEX deliveries_by_hook_last_status ON deliveries(hook_id, last_status, id)
    WHERE last_status IS NOT NULL;
  `,
  // Changes of users, tokens and hooks counted in the file, so that the daemon tells another
  // process's from its own writer thread's commits (external-changes.ts).
  STORE_CHANGES_MIGRATION,
  // The receiver-status index leaves out the 2xx answers, the last status of nearly every
  // delivery: a success then writes no entry in it. A filter outside 2xx (a 5xx, one 404) reads
  // this index; one within 2xx reads `(hook_id, id)` newest first, as the succeeded filter does.
  `
  DROP INDEX deliveries_by_hook_last_status;
  CREATE INDEX deliveries_by_hook_last_status ON deliveries(hook_id, last_status, id)
    WHERE last_status NOT BETWEEN 200 AND 299;
  `,
];
