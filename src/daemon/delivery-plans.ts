/**
 * The daemon's delivery plans (delivery/plan/): a hook's compiled from the hook once per stored
 * version (a saved hook is a new object in the engine), a notification endpoint's from what the
 * notifications know of it. The hooks' and endpoints' own state says whether they are active; a
 * 410 makes them inactive here at once, before that state is stored. This is the one place that
 * answers whether a hook or endpoint may still be sent to.
 *
 * The engine and the notifications send through the pipeline, so they are made after it, and the
 * plans are made before it: the assembly gives them the engine and the notifications once they
 * exist (`attach`). Before that no delivery can be due: the pipeline starts after the assembly.
 */
import type { Logger } from 'pino';
import { loadOperatorTls, type TlsConnectOptions, tlsConnectOptions } from '../client-tls/index.js';
import type { HookdConfig } from '../config/index.js';
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
import type { SignatureScheme } from '../signing/index.js';
import type { VerificationMode } from '../verification/index.js';

/** What the daemon's configuration adds to every plan. */
export interface PlanDefaults {
  /** `--callback-client-cert`: presented on https callbacks of hooks without `Tls` of their own. */
  operatorTls: TlsConnectOptions | undefined;
  /** `--callback-verification`: for hooks without `Verification` of their own (default off). */
  verification: VerificationMode | undefined;
}

/** The hooks, as the plans read them (the match engine knows every hook and its state). */
export interface HookLookup {
  get(id: string): Hook | undefined;
}

/** The notification endpoints, as the plans read them (the notifications). */
export interface EndpointLookup {
  isActive(id: string): boolean;
  /** A receiver said it wants no more (410 Gone): its hook or endpoint is disabled. */
  gone(id: string): Promise<void>;
  schemesOf(id: string): readonly SignatureScheme[] | undefined;
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

export class DaemonPlans implements DeliveryPlans {
  #hooks: HookLookup | undefined;
  #endpoints: EndpointLookup | undefined;
  readonly #book: PlanBook<Hook | EndpointSubject>;

  constructor(
    private readonly defaults: PlanDefaults,
    log: Logger,
  ) {
    this.#book = new PlanBook<Hook | EndpointSubject>({
      current: (id) => (isEndpointId(id) ? { endpoint: id } : this.hooks.get(id)),
      compile: (s) => ('endpoint' in s ? this.endpointPlan(s.endpoint) : hookPlan(s, defaults)),
      store: (id) => this.endpoints.gone(id),
      onStoreError: (hookId, err) => log.error({ err, hookId }, 'disabling the hook failed'),
    });
  }

  /** Gives the plans the engine and the notifications, once the assembly has made them. */
  attach(hooks: HookLookup, endpoints: EndpointLookup): void {
    this.#hooks = hooks;
    this.#endpoints = endpoints;
  }

  planOf(subjectId: string): DeliveryPlan {
    return this.#book.planOf(subjectId);
  }

  disable(subjectId: string): boolean {
    return this.#book.disable(subjectId);
  }

  /** This version's plan of a hook, whatever its state (the API shows its verification mode). */
  ofHook(hook: Hook): DeliveryPlan {
    return this.#book.compiled(hook);
  }

  private endpointPlan(id: string): DeliveryPlan {
    return Object.freeze({
      ...INACTIVE_PLAN,
      active: this.endpoints.isActive(id),
      schemes: this.endpoints.schemesOf(id),
      verification: this.defaults.verification ?? 'off',
    });
  }

  private get hooks(): HookLookup {
    if (this.#hooks === undefined)
      throw new Error('the delivery plans are asked before the engine is attached');
    return this.#hooks;
  }

  private get endpoints(): EndpointLookup {
    if (this.#endpoints === undefined)
      throw new Error('the delivery plans are asked before the notifications are attached');
    return this.#endpoints;
  }
}

/** The plans with the configuration's defaults: the operator's client certificate, verification. */
export function daemonPlans(config: HookdConfig, log: Logger): DaemonPlans {
  const operatorTls =
    config.callbackClientCert !== undefined && config.callbackClientKey !== undefined
      ? tlsConnectOptions(loadOperatorTls(config.callbackClientCert, config.callbackClientKey))
      : undefined;
  return new DaemonPlans({ operatorTls, verification: config.callbackVerification }, log);
}
