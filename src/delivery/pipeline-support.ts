/**
 * Small pieces of the delivery pipeline kept apart from it (pipeline.ts stays the flow, not the
 * helpers): event times, the shared-store secret agreement, and attempt-result mapping.
 */
import { isoTimestamp } from '../hook/hook.js';
import type { DeliveryStore, HookSecretRecord } from '../store/delivery-store.js';
import type { DestinationOutcome } from './circuit-breaker.js';
import type { AttemptResult } from './sender.js';

let lastIsoMs = -1;
let lastIso = '';
/** `isoTimestamp` for epoch ms, remembering the last one: events come many per millisecond. */
export function isoTime(ms: number): string {
  if (ms !== lastIsoMs) {
    lastIsoMs = ms;
    lastIso = isoTimestamp(new Date(ms));
  }
  return lastIso;
}

/**
 * The store as the signing secrets see it: where the store can create a secret "unless one
 * exists" (`createSecret`, a store shared by several instances), a first secret is created that
 * way, and the record the secrets module holds is made the stored one, so that instances
 * creating a hook's secret at once all sign with the same.
 */
export function agreeOnFirstSecret(store: DeliveryStore): DeliveryStore {
  const create = store.createSecret?.bind(store);
  if (!create) return store;
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key !== 'putSecret') return Reflect.get(target, key, receiver);
      return async (record: HookSecretRecord): Promise<void> => {
        if (record.previous !== null) return target.putSecret(record);
        Object.assign(record, await create(record));
      };
    },
  });
}

/** What an attempt says about its destination, for the circuit breaker. */
export function destinationOutcome(r: AttemptResult): DestinationOutcome {
  if (r.denied) return 'none';
  const s = r.statusCode;
  if (s === null || s >= 500 || s === 429) return 'fail';
  return 'ok';
}

export function internalFailure(err: Error): AttemptResult {
  return {
    statusCode: null,
    error: `not sent: hookd failed to prepare the attempt (${err.message})`,
    latencyMs: 0,
    responseBody: null,
    retryAfter: undefined,
    denied: false,
    aborted: false,
  };
}
