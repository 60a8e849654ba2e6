/**
 * Attempt outcomes written to SQLite as multi-row statements, per chunk of up to CHUNK outcomes
 * inside the batch's transaction: the deliveries' new states as one
 * `UPDATE … FROM (VALUES …)` and their attempt records as one `INSERT … VALUES …`: a statement
 * per row cost about 17 µs per outcome, its setup paid per row rather than per chunk
 * (docs/BENCHMARKS.md "Callback path: fewer steps"). New deliveries stay a statement per row: the
 * multi-row insert measured no faster.
 */
import type Database from 'better-sqlite3';
import type { AttemptRecord, DeliveryState } from '../delivery-store.js';
import { CHUNK, SizedStatements, values } from './sized-statements.js';

export class SqliteOutcomes {
  private readonly updates: SizedStatements;
  private readonly attempts: SizedStatements;

  constructor(db: Database.Database) {
    this.updates = new SizedStatements(db, updateSql);
    this.attempts = new SizedStatements(db, attemptSql);
  }

  /**
   * Writes the states, one per delivery (`dedupeUpdates`: one statement must not change a row
   * twice); call inside the batch's transaction, before `writeAttempts`.
   */
  writeStates(states: readonly DeliveryState[]): void {
    chunked(states, 7, this.updates, putState);
  }

  /** Writes the attempt records; a repeat of a (delivery, attempt) pair replaces it. */
  writeAttempts(rows: readonly AttemptRecord[]): void {
    chunked(rows, 9, this.attempts, putAttempt);
  }
}

function chunked<T>(
  rows: readonly T[],
  columns: number,
  statements: SizedStatements,
  put: (row: T, params: unknown[], at: number) => void,
): void {
  for (let at = 0; at < rows.length; at += CHUNK) {
    const n = Math.min(CHUNK, rows.length - at);
    const params = new Array<unknown>(n * columns);
    for (let i = 0; i < n; i++) put(rows[at + i]!, params, i * columns);
    statements.get(n).run(params);
  }
}

function putState(u: DeliveryState, params: unknown[], p: number): void {
  params[p] = u.id;
  params[p + 1] = u.status;
  params[p + 2] = u.attempts;
  params[p + 3] = u.roundStart;
  params[p + 4] = u.nextAttempt;
  params[p + 5] = u.lastStatusCode;
  params[p + 6] = u.lastError;
}

function putAttempt(a: AttemptRecord, params: unknown[], p: number): void {
  params[p] = a.deliveryId;
  params[p + 1] = a.attempt;
  params[p + 2] = a.hookId;
  params[p + 3] = a.time;
  params[p + 4] = a.statusCode;
  params[p + 5] = a.latencyMs;
  params[p + 6] = a.error;
  params[p + 7] = a.responseBody;
  params[p + 8] = a.rateLimitWaitMs ?? null;
}

const updateSql = (n: number): string =>
  'UPDATE deliveries SET status = u.column2, attempts = u.column3, round_start = u.column4, ' +
  'next_attempt = u.column5, last_status = u.column6, last_error = u.column7 ' +
  `FROM (VALUES ${values(n, 7)}) AS u WHERE deliveries.id = u.column1`;

// INSERT OR REPLACE over several rows applies them in order: a later repeat wins, as row by row.
const attemptSql = (n: number): string =>
  'INSERT OR REPLACE INTO delivery_attempts (delivery_id, attempt, hook_id, time, status, latency_ms, ' +
  `error, response, rate_wait_ms) VALUES ${values(n, 9)}`;
