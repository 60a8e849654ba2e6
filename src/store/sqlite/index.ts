/** The embedded SQLite store: one file in the data dir, one hookd. Loads `better-sqlite3`. */
export { SqliteDeliveryStore } from './sqlite-delivery-store.js';
export { SqliteSealedMarker } from './sqlite-sealed-marker.js';
export { SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
export { checkpointWal, WAL_SIZE_LIMIT_BYTES } from './wal-checkpoint.js';
