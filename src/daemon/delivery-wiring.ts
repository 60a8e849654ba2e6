/**
 * The delivery pipeline as this daemon configures it: its stores, the address policy, per-hook
 * schedules and rate limits, breaker notifications, and the attempt log line and metrics.
 */

import type { Logger } from 'pino';
import { loadOperatorTls, tlsConnectOptions } from '../client-tls/index.js';
import type { HookdConfig } from '../config/index.js';
import type { RetrySchedule } from '../delivery/index.js';
import { DeliveryPipeline, type DeliveryPipelineOptions } from '../delivery/index.js';
import { connectTunnel, egressProxyOf } from '../egress/index.js';
import { breakerEvents, isEndpointId } from '../notifications/index.js';
import { OAuth2Bearer, TokenClient } from '../oauth2/index.js';
import type { Metrics } from '../observability/index.js';
import { orderingKeyOf } from '../ordering/index.js';
import type { Tracing } from '../tracing/index.js';
import { createPinnedDispatcher, type TransportRegistry } from '../transports/index.js';
import { rateLimitWithAllowedRate, type VerificationMode } from '../verification/index.js';
import { deliveryOptions, hookSchedule, perHookDelivery } from './delivery-options.js';
import type { DeliverySubjects } from './delivery-subjects.js';
import type { OpenedStores } from './open-store.js';
import type { RuntimeSettings } from './runtime-settings.js';
import type { StoreFaults } from './store-faults.js';

export interface DeliveryWiring {
  config: HookdConfig;
  opened: OpenedStores;
  settings: RuntimeSettings;
  faults: StoreFaults;
  tracing: Tracing | undefined;
  metrics: Metrics;
  log: Logger;
  /**
   * The hooks and notification endpoints (delivery-subjects.ts): the pipeline asks per delivery
   * whether its hook may still be sent to. The engine knows every hook and its state and answers
   * from memory (a map of its own would be 100,000 entries more).
   */
  subjects: DeliverySubjects;
  /** Which hooks verify their endpoint (src/verification/). */
  verifyMode: (hookId: string) => VerificationMode;
  /** Marks hookd's own requests (src/loops/). */
  loopMark?: DeliveryPipelineOptions['loopMark'];
  /** The transports by Callback scheme. */
  transports: TransportRegistry;
}

export function createDeliveries(w: DeliveryWiring): DeliveryPipeline {
  const { config, opened, settings, metrics, log, subjects } = w;
  const hooks = () => subjects.hooks;
  // Callbacks and OAuth2 token requests leave through the egress proxy alike.
  const tunnel = config.callbackProxy
    ? connectTunnel(egressProxyOf(config.callbackProxy, config.callbackProxyCredentialsFile))
    : undefined;
  const operatorTls =
    config.callbackClientCert !== undefined && config.callbackClientKey !== undefined
      ? tlsConnectOptions(loadOperatorTls(config.callbackClientCert, config.callbackClientKey))
      : undefined;
  const deliveries: DeliveryPipeline = new DeliveryPipeline({
    durable: opened.deliveries.durable,
    ephemeral: opened.deliveries.ephemeral,
    policy: settings.policy,
    transports: w.transports,
    // A delivery to a notification endpoint came from the notifications' own door.
    sourceOf: (id) => (isEndpointId(id) ? 'notification' : 'callback'),
    hookState: {
      isActive: (id) => subjects.hooks.isActive(id) || subjects.endpoints.isActive(id),
      disable: (id) => subjects.endpoints.gone(id),
    },
    ...(config.retrySchedule && { schedule: { delaysMs: config.retrySchedule.map((sec) => sec * 1000) } }),
    scheduleFor: (id: string): RetrySchedule | undefined => hookSchedule(subjects.hooks.get(id)),
    ...perHookDelivery(() => metrics, w.tracing),
    // v1/v1a per hook or notification endpoint; ordering keys; verification; egress.
    schemesFor: (id) => subjects.hooks.get(id)?.Signature?.Schemes ?? subjects.endpoints.schemesOf(id),
    // OAuth2 bearer tokens: the token endpoint is reached under the callbacks' address policy.
    auth: new OAuth2Bearer(
      (id) => subjects.hooks.get(id)?.Auth?.OAuth2,
      new TokenClient({ dispatcher: createPinnedDispatcher(settings.policy, { ...(tunnel && { tunnel }) }) }),
    ),
    tlsFor: (id) => {
      const hook = subjects.hooks.get(id);
      if (hook?.Tls) return tlsConnectOptions(hook.Tls);
      // The operator's certificate: only for https callbacks, never for notification endpoints.
      return operatorTls && hook?.Callback.startsWith('https:') ? operatorTls : undefined;
    },
    orderingKeyFor: (id, trigger) => orderingKeyOf(subjects.hooks.get(id), trigger),
    verification: { modeFor: w.verifyMode },
    ...(tunnel && { tunnel }),
    // A verified origin's WebHook-Allowed-Rate, unless the hook has its own RateLimit.
    rateLimitFor: rateLimitWithAllowedRate(hooks, () => deliveries.verifier),
    logger: log,
    health: w.faults.health,
    ...(w.loopMark && { loopMark: w.loopMark }),
    ...deliveryOptions(config, { onTransition: breakerEvents(() => deliveries.events) }),
  });
  return deliveries;
}

/** Each attempt's log line and metrics (after the notifications' listeners, as they were made first). */
export function recordAttempts(
  deliveries: DeliveryPipeline,
  metrics: Metrics,
  log: Logger,
  transports: TransportRegistry,
): void {
  deliveries.events.on('attempt', (m) => {
    metrics.attempt(m.Outcome, m.LatencyMs, transports.family(m.Url));
    // At the usual production level (warn) the line would be built only to be dropped.
    if (!log.isLevelEnabled('info')) return;
    const { HookId: hookId, DeliveryId: deliveryId, Attempt: attempt, Outcome: outcome } = m;
    const line = { hookId, deliveryId, attempt, status: m.StatusCode, durationMs: m.LatencyMs, outcome };
    // No `err` key when there is no error: the pretty log would print `err: null` under every line.
    log.info(
      { ...line, ...(m.Error !== null && { err: m.Error }), ...(m.Test && { test: true }) },
      'delivery attempt',
    );
  });
}
