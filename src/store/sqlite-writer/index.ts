/**
 * The SQLite writer thread: the delivery side's writes on one connection of their own, off the
 * event loop that sends (decision 0082). Loads `better-sqlite3` in that thread.
 */

export type { WriterSettings } from './wire.js';
export { SqliteWriterStore } from './writer-store.js';
