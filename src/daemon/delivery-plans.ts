/**
 * The daemon's delivery plans (delivery/plan/): a hook's compiled from the hook once per stored
 * version (a saved hook is a new object in the engine), a notification endpoint's from what the
 * notifications know of it. The hooks' and endpoints' own state says whether they are active; a
 * 410 makes them inactive here at once, before that state is stored.
 */
import type { Logger } from 'pino';
import { type TlsConnectOptions, tlsConnectOptions } from '../client-tls/index.js';
import {
  type DeliveryPlan,
  type DeliveryPlans,
  INACTIVE_PLAN,
  PlanBook,
  retrySchedule,
} from '../delivery/index.js';
import type { Hook } from '../hook/index.js';
import { isEndpointId } from '../notifications/index.js';
import { type KeyTrigger, orderingKeyOf } from '../ordering/index.js';
import type { VerificationMode } from '../verification/index.js';
import type { DeliverySubjects } from './delivery-subjects.js';

/** What the daemon's configuration adds to every plan. */
export interface PlanDefaults {
  /** `--callback-client-cert`: presented on https callbacks of hooks without `Tls` of their own. */
  operatorTls: TlsConnectOptions | undefined;
  /** `--callback-verification`: for hooks without `Verification` of their own (default off). */
  verification: VerificationMode | undefined;
}

function originOf(url: string): string | undefined {
  return URL.canParse(url) ? new URL(url).origin : undefined;
}

/** A hook's plan: its schedule, schemes, TLS, rate limit, ordering, verification and OAuth2. */
export function hookPlan(hook: Hook, d: PlanDefaults): DeliveryPlan {
  return Object.freeze({
    active: hook.State === 'active',
    schedule:
      hook.RetrySchedule === undefined
        ? undefined
        : retrySchedule({ delaysMs: hook.RetrySchedule.map((sec) => sec * 1000) }),
    schemes: hook.Signature?.Schemes,
    tls: hook.Tls
      ? tlsConnectOptions(hook.Tls)
      : // The operator's certificate: only for https callbacks, never for notification endpoints.
        d.operatorTls && hook.Callback.startsWith('https:')
        ? d.operatorTls
        : undefined,
    rateLimit: hook.RateLimit,
    // A verified origin's WebHook-Allowed-Rate, unless the hook has its own RateLimit.
    allowedRateOrigin: hook.RateLimit === undefined ? originOf(hook.Callback) : undefined,
    orderingKey:
      hook.Ordering === undefined ? undefined : (trigger: KeyTrigger) => orderingKeyOf(hook, trigger),
    verification: hook.Verification ?? d.verification ?? 'off',
    oauth2: hook.Auth?.OAuth2,
  });
}

/** A notification endpoint as a plan subject: made per look-up (endpoints are few, and re-read). */
interface EndpointSubject {
  readonly endpoint: string;
}

export function deliveryPlans(
  subjects: DeliverySubjects,
  defaults: PlanDefaults,
  log: Logger,
): DeliveryPlans {
  return new PlanBook<Hook | EndpointSubject>({
    current: (id) => (isEndpointId(id) ? { endpoint: id } : subjects.hooks.get(id)),
    compile: (s) => {
      if ('endpoint' in s) {
        const endpoints = subjects.endpoints;
        return Object.freeze({
          ...INACTIVE_PLAN,
          active: endpoints.isActive(s.endpoint),
          schemes: endpoints.schemesOf(s.endpoint),
          verification: defaults.verification ?? 'off',
        });
      }
      return hookPlan(s, defaults);
    },
    store: (id) => subjects.endpoints.gone(id),
    onStoreError: (hookId, err) => log.error({ err, hookId }, 'disabling the hook failed'),
  });
}
