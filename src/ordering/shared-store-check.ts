/**
 * Ordering across the instances of a cluster (a shared PostgreSQL store): each instance holds the
 * deliveries its own triggers fired, so its local queue of a key does not know the others'. Before
 * a local head goes, the store is asked whether an earlier delivery of the same key is still
 * pending anywhere; while one is, the head waits and asks again. One instance sends a key's head
 * at a time because there is one earliest pending delivery per key.
 */
import type { DeliveryRecord, DeliveryStore } from '../store/index.js';
import type { KeyTrigger } from './ordering-key.js';

/** Re-asked this often while an earlier delivery of the key is pending elsewhere, ms. */
export const SHARED_RECHECK_MS = 250;

type Item = Pick<DeliveryRecord, 'id' | 'hookId' | 'roundStart' | 'trigger'> & { persist: boolean };

/**
 * Resolves true when nothing of `item`'s key comes before it among the pending deliveries of the
 * store; undefined when the store is not shared (the local queue is then the whole truth).
 */
export function sharedStoreCheck(
  storeFor: (persist: boolean) => DeliveryStore,
  keyFor: (hookId: string, trigger: KeyTrigger) => string | undefined,
): ((item: Item) => Promise<boolean>) | undefined {
  if (!storeFor(true).sharing.shared) return undefined;
  return async (item) => {
    const store = storeFor(item.persist);
    const key = keyFor(item.hookId, item.trigger);
    // A first-round delivery comes after older Ids only; a redelivery after every first round too.
    const rows = await store.listDeliveries(item.hookId, {
      status: 'pending',
      ...(item.roundStart === 0 && { after: item.id }),
      limit: 10_000,
    });
    return !rows.some((r) => r.id !== item.id && comesBefore(r, item) && keyFor(r.hookId, r.trigger) === key);
  };
}

function comesBefore(a: Pick<Item, 'id' | 'roundStart'>, b: Pick<Item, 'id' | 'roundStart'>): boolean {
  const ra = a.roundStart > 0 ? 1 : 0;
  const rb = b.roundStart > 0 ? 1 : 0;
  return ra !== rb ? ra < rb : a.id < b.id;
}
