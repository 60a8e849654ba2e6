/**
 * The PostgreSQL store, one hookd or a cluster of them. Loads `pg`: import it only when a
 * database URL is configured (its driver-free values are in the store's own index).
 */
export { PgDatabase, type PgDatabaseOptions } from './pg-database.js';
export { PgSealedMarker } from './pg-sealed-marker.js';
export {
  type LeaseIdentity,
  PostgresDeliveryStore,
  type PostgresDeliveryStoreOptions,
} from './postgres-delivery-store.js';
export { PgHookTable, PostgresStore } from './postgres-store.js';
