/**
 * Ordered delivery per key: `Ordering: {"Key": "<template>"}` on a hook. The pipeline
 * keeps its live deliveries in an `LiveDeliveries` and asks `KeyQueues.admit` before sending;
 * the daemon tells it each delivery's key with `orderingKeyOf`.
 */

export type { OrderingConfig } from '../hook/index.js';
export { KeyQueues, type OrderedItem } from './key-queues.js';
export { LiveDeliveries } from './live-map.js';
export { type KeyTrigger, orderingKeyOf } from './ordering-key.js';
export { sharedStoreCheck } from './shared-store-check.js';
