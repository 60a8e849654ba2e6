/**
 * A hook's (or notification endpoint's) delivery plan: everything an attempt needs from its
 * subject, compiled once per version of the subject and never changed. The pipeline asks for the
 * plan of a delivery's subject as it is now, so a pending delivery of a changed hook goes with the
 * changed hook's TLS, auth, signature schemes, rate limit and schedule, and with the URL it fired
 * with (the URL is the delivery's own, rendered at firing).
 */
import type { TlsConnectOptions } from '../../client-tls/index.js';
import type { RateLimit } from '../../hook/index.js';
import type { OAuth2Credentials } from '../../oauth2/index.js';
import type { KeyTrigger } from '../../ordering/index.js';
import type { SignatureScheme } from '../../signing/index.js';
import type { VerificationMode } from '../../verification/index.js';
import type { RetrySchedule } from '../retry-policy.js';

export interface DeliveryPlan {
  /** False once the subject is disabled or deleted: its pending deliveries are not sent. */
  readonly active: boolean;
  /** The subject's retry schedule; undefined: the pipeline's. */
  readonly schedule: RetrySchedule | undefined;
  /** Signature schemes (src/signing/); undefined: `v1`. */
  readonly schemes: readonly SignatureScheme[] | undefined;
  /** Client certificate and private CA for an https receiver (src/client-tls/). */
  readonly tls: TlsConnectOptions | undefined;
  /** The subject's own `RateLimit`. */
  readonly rateLimit: RateLimit | undefined;
  /**
   * Without a `RateLimit` of its own: the Callback's origin, whose verified
   * `WebHook-Allowed-Rate` then limits it (src/verification/).
   */
  readonly allowedRateOrigin: string | undefined;
  /** A delivery's ordering key (src/ordering/); undefined: the subject is not ordered. */
  readonly orderingKey: ((trigger: KeyTrigger) => string | undefined) | undefined;
  /** Whether its receivers are asked by the CloudEvents handshake before the first delivery. */
  readonly verification: VerificationMode;
  /** OAuth2 client credentials: attempts carry a bearer token (src/oauth2/). */
  readonly oauth2: OAuth2Credentials | undefined;
}

/** The plan of a subject that is gone (unknown, deleted): nothing is sent. */
export const INACTIVE_PLAN: DeliveryPlan = Object.freeze({
  active: false,
  schedule: undefined,
  schemes: undefined,
  tls: undefined,
  rateLimit: undefined,
  allowedRateOrigin: undefined,
  orderingKey: undefined,
  verification: 'off',
  oauth2: undefined,
});

/** An active subject with every default: the pipeline's schedule, `v1`, no limits. */
export const DEFAULT_PLAN: DeliveryPlan = Object.freeze({ ...INACTIVE_PLAN, active: true });

/**
 * Where the pipeline finds plans: the one place that knows whether a subject may still be sent
 * to. The daemon answers from its hooks and notification endpoints (src/daemon/delivery-plans.ts).
 */
export interface DeliveryPlans {
  /** The plan of a subject as it is now; `INACTIVE_PLAN` for one unknown or gone. */
  planOf(subjectId: string): DeliveryPlan;
  /**
   * A receiver answered 410 Gone: the subject is inactive from now on and its disabled state is
   * stored. False when it was disabled already (the pipeline then does nothing more).
   */
  disable(subjectId: string): boolean;
}

/** Plans for a pipeline whose every subject has the same one (tests, benchmarks): never disabled. */
export function samePlanForAll(plan: DeliveryPlan = DEFAULT_PLAN): DeliveryPlans {
  return { planOf: () => plan, disable: () => true };
}
