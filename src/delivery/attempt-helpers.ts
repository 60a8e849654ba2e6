/**
 * Small pieces of the pipeline that need none of its state: how an attempt's result feeds the
 * circuit breakers, the record of an attempt hookd could not prepare, the limits with their
 * defaults, the secret store wrapper that agrees on a first secret, and cached ISO times.
 */
import { isoTimestamp } from '../hook/hook.js';
import type { DeliveryStore, HookSecretRecord } from '../store/delivery-store.js';
import { type BreakerOptions, DEFAULT_BREAKER } from './circuit-breaker.js';
import { type AttemptVerdict, DEFAULT_LIMITS, type FairnessLimits } from './fairness.js';
import { type AttemptResult, DEFAULT_ATTEMPT_TIMEOUT_MS } from './sender.js';

export interface DeliveryLimits extends FairnessLimits {
  /** Time limit of one attempt, from dispatch to the end of the response, ms (default 15 s). */
  timeoutMs: number;
  /** Time limit of name resolution plus connect, ms (default 10 s). */
  connectTimeoutMs: number;
}

export type DeliveryLimitOptions = Partial<Omit<DeliveryLimits, 'breaker'>> & {
  breaker?: Partial<BreakerOptions>;
};

/** The limits with their defaults; a per-endpoint limit above the per-host one is the per-host one. */
export function resolveLimits(l: DeliveryLimitOptions = {}): DeliveryLimits {
  const perHost = l.perHost ?? DEFAULT_LIMITS.perHost;
  return {
    concurrency: l.concurrency ?? DEFAULT_LIMITS.concurrency,
    perHost,
    perEndpoint: Math.min(l.perEndpoint ?? DEFAULT_LIMITS.perEndpoint, perHost),
    breaker: { ...DEFAULT_BREAKER, ...l.breaker },
    timeoutMs: l.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS,
    connectTimeoutMs: l.connectTimeoutMs ?? 10_000,
  };
}

/** What an attempt says about its endpoint and host, for the circuit breakers. */
export function verdictOf(r: AttemptResult): AttemptVerdict {
  if (r.denied) return 'none';
  const s = r.statusCode;
  if (s === null) return r.unreachable ? 'unreachable' : 'timeout';
  if (s >= 500 || s === 429) return 'fail';
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

/** The record of an attempt that was not sent (a circuit is open). */
export function notSent(reason: string): AttemptResult {
  return {
    statusCode: null,
    error: reason,
    latencyMs: 0,
    responseBody: null,
    retryAfter: undefined,
    denied: false,
    aborted: false,
  };
}

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
