/**
 * Store faults as the daemon answers them (docs/DECISIONS.md "Store faults"): one `StoreHealth`
 * told by the API and the delivery outbox, a probe write that brings readiness back when nothing
 * else writes, the mapping of a refused write onto 503 `STORE_UNAVAILABLE` with `Retry-After`,
 * and what `/readyz` asks.
 */
import type { Logger } from 'pino';
import { HookdError } from '../errors/index.js';
import {
  type DeliveryStore,
  describeStoreFault,
  fromStore,
  STORE_RETRY_AFTER_S,
  StoreHealth,
} from '../store/index.js';

// Not a hook Id (those are `hk_…`): the probe's row never meets a real secret.
const PROBE_ID = '~hookd-store-probe';

export interface StoreFaults {
  readonly health: StoreHealth;
  /** A store fault thrown by a route, as the problem the API answers; undefined for anything else. */
  mapError(err: Error): HookdError | undefined;
  /** The 503 answered up front while the store refuses writes (POST /report). */
  unavailable(): HookdError | undefined;
  stop(): void;
}

export function storeFaults(probeStore: DeliveryStore, log: Logger): StoreFaults {
  const health = new StoreHealth(
    async () => {
      // A real write that needs new space (a secret row of 16 KiB), then its removal.
      await probeStore.putSecret({
        hookId: PROBE_ID,
        secret: 'p'.repeat(16 * 1024),
        previous: null,
        previousValidUntil: null,
      });
      await probeStore.deleteSecret(PROBE_ID);
    },
    2000,
    (available, state) => {
      if (available) log.warn('the store takes writes again: ready');
      else log.error({ err: state?.error, sources: state?.sources }, 'the store refuses writes: not ready');
    },
  );
  const problem = (detail: string) =>
    new HookdError(
      'STORE_UNAVAILABLE',
      `the store cannot be used right now (${detail}); nothing was changed: retry after ${STORE_RETRY_AFTER_S} s`,
      { headers: { 'retry-after': String(STORE_RETRY_AFTER_S) } },
    );
  return {
    health,
    mapError(err) {
      // Only what the store threw (guardStore marks it): a refused connection elsewhere is not this.
      if (!fromStore(err)) return undefined;
      health.fault('api', err);
      return problem(describeStoreFault(err));
    },
    unavailable() {
      const state = health.state;
      return state && problem(state.error);
    },
    stop: () => health.stop(),
  };
}
