/**
 * The two kinds of DeliverySharing (delivery-store.ts): a delivery store of one process, and one
 * that instances share through a database.
 */
import type { DeliveryRecord, DeliverySharing, DeliveryStore, HookSecretRecord } from './delivery-store.js';

/** Memory and SQLite: every pending delivery is this process's, and no one else makes secrets. */
export function singleProcess(
  store: Pick<DeliveryStore, 'pendingDeliveries' | 'putSecret'>,
): DeliverySharing {
  return {
    shared: false,
    resumable: () => store.pendingDeliveries(),
    claim: async () => [],
    release: async () => 0,
    storeFirstSecret: async (secret) => {
      await store.putSecret(secret);
      return secret;
    },
  };
}

/** What a shared delivery store offers to build its DeliverySharing from (PostgresDeliveryStore). */
export interface ClaimingStore {
  claimPending(limit: number): Promise<DeliveryRecord[]>;
  releasePending(): Promise<number>;
  createSecret(secret: HookSecretRecord): Promise<HookSecretRecord>;
}

/** Claimed per statement while resuming at start. */
const RESUME_BATCH = 1000;

/** PostgreSQL: pending deliveries are claimed by one instance at a time; the first secret wins. */
export function shared(store: ClaimingStore): DeliverySharing {
  return {
    shared: true,
    resumable: async () => {
      const out: DeliveryRecord[] = [];
      for (;;) {
        const batch = await store.claimPending(RESUME_BATCH);
        out.push(...batch);
        if (batch.length < RESUME_BATCH) return out;
      }
    },
    claim: (limit) => store.claimPending(limit),
    release: () => store.releasePending(),
    storeFirstSecret: (secret) => store.createSecret(secret),
  };
}
