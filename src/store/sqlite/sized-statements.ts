import type Database from 'better-sqlite3';

/** Rows per multi-row statement: 64 × 9 parameters stays far below SQLite's limit of 32,766. */
export const CHUNK = 64;

/** `(?, ?, …), (?, ?, …)`: `rows` rows of `columns` parameters. */
export const values = (rows: number, columns: number): string => {
  const row = `(${new Array<string>(columns).fill('?').join(', ')})`;
  return new Array<string>(rows).fill(row).join(', ');
};

/**
 * One multi-row statement per row count, prepared at first use (a full chunk, and each
 * remainder seen): a batch's rows go in chunks of CHUNK through the same few statements.
 */
export class SizedStatements {
  private readonly cache = new Map<number, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    private readonly sql: (rows: number) => string,
  ) {}

  get(rows: number): Database.Statement {
    let s = this.cache.get(rows);
    if (s === undefined) {
      s = this.db.prepare(this.sql(rows));
      this.cache.set(rows, s);
    }
    return s;
  }
}
