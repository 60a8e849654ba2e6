/**
 * The three kinds of Coordination (store.ts): a store no other process writes, a store file that
 * other processes of the host write, and a database that instances share.
 */
import type { ChangeFollower, Coordination, HookChangeWatcher } from './store.js';

const runNow = <T>(fn: () => Promise<T>): Promise<T> => fn();
const stopNothing = (): void => undefined;

/** Process memory: nobody else takes turns with this process or changes what it holds. */
export const ALONE: Coordination = {
  shared: false,
  exclusively: runNow,
  followChanges: async () => stopNothing,
};

/**
 * A store file on this host (SQLite): one daemon runs on it, so there are no turns to take, but
 * `hookd user …` beside it writes the file; `watch` reports that the file changed.
 */
export function localFile(watch: (onChange: () => void) => () => void): Coordination {
  return {
    shared: false,
    exclusively: runNow,
    followChanges: async (follower: ChangeFollower) => watch(() => follower.changedElsewhere()),
  };
}

/** What a shared database offers to build its Coordination from (PostgresStore). */
export interface SharedDatabase {
  exclusively<T>(fn: () => Promise<T>): Promise<T>;
  watchHookChanges(watcher: HookChangeWatcher): Promise<() => void>;
}

/** A database several instances share (PostgreSQL): turns and changes go through it. */
export function sharedDatabase(db: SharedDatabase): Coordination {
  return {
    shared: true,
    exclusively: (fn) => db.exclusively(fn),
    followChanges: (follower) => db.watchHookChanges(follower),
  };
}
