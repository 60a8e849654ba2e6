/** Idempotent reports: the `Idempotency-Key` hooks of the API and the stores of keys. */

export {
  type Claim,
  type IdempotencyStore,
  MemoryIdempotencyStore,
  type StoredAnswer,
} from './idempotency-store.js';
export {
  DEFAULT_IDEMPOTENCY_TTL_MS,
  IDEMPOTENCY_HEADER,
  type IdempotencyOptions,
  installIdempotency,
  isReportRequest,
  REPLAYED_HEADER,
} from './report-idempotency.js';
export { SqliteIdempotencyStore } from './sqlite-idempotency-store.js';
