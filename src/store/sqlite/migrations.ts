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
];
