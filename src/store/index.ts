/**
 * What the rest of hookd uses of storage: the interfaces every backend implements, the
 * capabilities every store hands out (Coordination, DeliverySharing), and the helpers around
 * faults and the console's figures. No backend is loaded from here: the openers are in each
 * backend's folder (memory/, sqlite/, postgres/), so that a process loads only the driver it
 * uses. The PostgreSQL values below need no driver (postgres/pg-common.ts).
 */
export {
  CombinedAggregates,
  type DeliveryAggregates,
  HOOK_BUCKET_MS,
  type LastDelivery,
  type OutcomeBucket,
  type OutcomeTotals,
  OWNER_BUCKET_MS,
  quantile,
} from './delivery-aggregates.js';
export {
  type AttemptRecord,
  copyDeliveryState,
  DELIVERY_STATUSES,
  type DeliveryBatch,
  type DeliveryQuery,
  type DeliveryRecord,
  type DeliverySharing,
  type DeliveryState,
  type DeliveryStatus,
  type DeliveryStore,
  emptyBatch,
  type HookSecretRecord,
  type RequestRewrite,
  type RetentionRule,
  type StoredRequest,
  type StoredTrigger,
} from './delivery-store.js';
export { isUniqueViolation, nameConflict } from './name-conflict.js';
export { DatabaseUnavailableError, LOCK_CLASS, LOCKS, SchemaTooNewError } from './postgres/pg-common.js';
export type { SealedMarker } from './sealed-marker.js';
export {
  type CredentialRow,
  type CredentialTable,
  hasUserInfo,
  hookDocument,
  hookFromDocument,
  openUrl,
  PLAIN_SECRETS,
  type SealedSecretTable,
  type SecretCodec,
  type StoredSecretRow,
  sealUrl,
} from './secret-codec.js';
export type {
  ChangeFollower,
  Coordination,
  HookChangeWatcher,
  HookStore,
  PageRequest,
  Store,
  TokenRecord,
  UserRecord,
  UserStore,
} from './store.js';
export { describeStoreFault, fromStore, guardStore, isStoreFault } from './store-fault.js';
export { STORE_RETRY_AFTER_S, type StoreFaultState, StoreHealth } from './store-health.js';
