import type Database from 'better-sqlite3';

/**
 * What the daemon must hear of when another process changes it (`hookd user …`, `hookd token …`,
 * a key rotation's re-sealed hooks): users, tokens and hooks. `PRAGMA data_version` would say
 * only that some other connection committed, and the daemon's own SQLite writer thread commits
 * all the time; so every change of these tables is counted in the file, and each connection
 * counts its own beside it (`ownChanges`): what is left is what others did.
 */
const WATCHED = ['users', 'tokens', 'hooks'] as const;
const EVENTS = ['INSERT', 'UPDATE', 'DELETE'] as const;

const triggers = (prefix: string, on: string, counter: string): string =>
  WATCHED.flatMap((t) =>
    EVENTS.map(
      (e) =>
        `CREATE ${prefix}TRIGGER ${counter.replace('.', '_')}_${t}_${e.toLowerCase()} AFTER ${e} ON ${on}${t} ` +
        `BEGIN UPDATE ${counter} SET n = n + 1; END;`,
    ),
  ).join('\n');

/** The count in the file (schema version 16); every writer's changes move it, any hookd's. */
export const STORE_CHANGES_MIGRATION = `
  CREATE TABLE store_changes (n INTEGER NOT NULL);
  INSERT INTO store_changes (n) VALUES (0);
  ${triggers('', '', 'store_changes')}
`;

/**
 * Starts counting this connection's own changes (TEMP triggers are the connection's alone) and
 * returns the reading of the others': a number that moves only when another connection has
 * changed users, tokens or hooks.
 */
export function othersChanges(db: Database.Database): () => number {
  db.exec(`
    CREATE TEMP TABLE own_changes (n INTEGER NOT NULL);
    INSERT INTO temp.own_changes (n) VALUES (0);
    ${triggers('TEMP ', 'main.', 'temp.own_changes')}
  `);
  const read = db
    .prepare('SELECT (SELECT n FROM main.store_changes) - (SELECT n FROM temp.own_changes)')
    .pluck();
  return () => read.get() as number;
}
