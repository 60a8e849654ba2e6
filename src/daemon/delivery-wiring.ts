/**
 * The delivery pipeline as this daemon configures it: its stores, the address policy, per-hook
 * schedules and rate limits, breaker notifications, and the attempt log line and metrics. Moved
 * out of createHookd (issue 27).
 */

import type { Logger } from 'pino';
import type { HookdConfig } from '../config/index.js';
import type { RetrySchedule } from '../delivery/index.js';
import { DeliveryPipeline, type DeliveryPipelineOptions } from '../delivery/index.js';
import { connectTunnel, egressProxyOf } from '../egress/index.js';
import type { MatchEngine } from '../engine/index.js';
import { breakerEvents, type Operations } from '../notifications/index.js';
import type { Metrics } from '../observability/index.js';
import { orderingKeyOf } from '../ordering/index.js';
import type { Tracing } from '../tracing/index.js';
import { rateLimitWithAllowedRate, type VerificationMode } from '../verification/index.js';
import { deliveryOptions, hookSchedule, perHookDelivery } from './delivery-options.js';
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
   * The engine and the notifications, made after the pipeline (they send through it): the
   * pipeline asks them per delivery whether its hook may still be sent to. The engine knows every
   * hook and its state and answers from memory (a map of its own would be 100,000 entries more).
   */
  engine: () => MatchEngine;
  operations: () => Operations;
  /** Issue 24: which hooks verify their endpoint (src/verification/). */
  verifyMode: (hookId: string) => VerificationMode;
  /** Marks hookd's own requests (src/loops/, issue 22). */
  loopMark?: DeliveryPipelineOptions['loopMark'];
}

export function createDeliveries(w: DeliveryWiring): DeliveryPipeline {
  const { config, opened, settings, metrics, log } = w;
  const deliveries: DeliveryPipeline = new DeliveryPipeline({
    durable: opened.deliveries.durable,
    ephemeral: opened.deliveries.ephemeral,
    policy: settings.policy,
    hookState: {
      isActive: (id) => w.engine().isActive(id) || w.operations().isActive(id),
      disable: (id) => w.operations().gone(id),
    },
    ...(config.retrySchedule && { schedule: { delaysMs: config.retrySchedule.map((sec) => sec * 1000) } }),
    scheduleFor: (id: string): RetrySchedule | undefined => hookSchedule(w.engine().get(id)),
    ...perHookDelivery(w.engine, () => metrics, w.tracing),
    // Issue 24: v1/v1a per hook or notification endpoint; ordering keys; verification; egress.
    schemesFor: (id) => w.engine().get(id)?.Signature?.Schemes ?? w.operations().notifier.schemesOf(id),
    orderingKeyFor: (id, trigger) => orderingKeyOf(w.engine().get(id), trigger),
    verification: { modeFor: w.verifyMode },
    ...(config.callbackProxy && {
      tunnel: connectTunnel(egressProxyOf(config.callbackProxy, config.callbackProxyCredentialsFile)),
    }),
    // A verified origin's WebHook-Allowed-Rate, unless the hook has its own RateLimit.
    rateLimitFor: rateLimitWithAllowedRate(w.engine, () => deliveries.verifier),
    logger: log,
    health: w.faults.health,
    ...(w.loopMark && { loopMark: w.loopMark }),
    ...deliveryOptions(config, { onTransition: breakerEvents(() => deliveries.events) }),
  });
  return deliveries;
}

/** Each attempt's log line and metrics (after the notifications' listeners, as they were made first). */
export function recordAttempts(deliveries: DeliveryPipeline, metrics: Metrics, log: Logger): void {
  deliveries.events.on('attempt', (m) => {
    metrics.attempt(m.Outcome, m.LatencyMs);
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
