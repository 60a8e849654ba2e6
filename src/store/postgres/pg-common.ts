/**
 * The PostgreSQL store's values that do not need the `pg` driver: lock keys and error classes.
 * Kept apart so that a daemon on SQLite never loads `pg` (docs/BENCHMARKS.md "Size": start-up);
 * the PostgreSQL modules themselves are imported only when a database URL is configured.
 */
import { redactDatabaseUrl } from '../../config/index.js';

/**
 * Advisory lock keys, in the two-int form: the first is hookd's class (`hook` in ASCII), the
 * second names the lock. Advisory locks are per database, so clusters on different databases
 * never contend.
 */
export const LOCK_CLASS = 0x686f6f6b;
export const LOCKS = {
  /** Migrations and the other start-up steps (the admin bootstrap, joining the cluster). */
  startup: 1,
  /** Held shared by every running instance on its listening session: "someone is running". */
  alive: 2,
  /** One instance at a time prunes the delivery log. */
  prune: 3,
  /**
   * Held shared by a transaction writing a sealed value, exclusively by a walk's claim on the
   * sealed marker (pg-sealed-marker.ts).
   */
  sealedMarker: 4,
} as const;

/** A connection error in words, naming the (redacted) database it was about. */
export class DatabaseUnavailableError extends Error {
  constructor(url: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(
      `cannot use the PostgreSQL database ${redactDatabaseUrl(url)}: ${why || (cause as { code?: string })?.code}`,
    );
    this.name = 'DatabaseUnavailableError';
  }
}

/** The database was migrated by a newer hookd: this one refuses to start rather than misread it. */
export class SchemaTooNewError extends Error {
  constructor(current: number, latest: number) {
    super(
      `the database schema is at version ${current}, newer than this hookd knows (${latest}); run a hookd at least as new as the one that migrated it`,
    );
    this.name = 'SchemaTooNewError';
  }
}
