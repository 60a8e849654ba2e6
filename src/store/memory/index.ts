/** The store in process memory: `Persist: false` hooks and their deliveries. */
export { MemoryDeliveryStore, type MemoryDeliveryStoreOptions } from './memory-delivery-store.js';
export { MemoryStore } from './memory-store.js';
