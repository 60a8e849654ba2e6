import type { Logger } from 'pino';
import { withLastFilterError } from '../api/index.js';
import type { HookdConfig } from '../config/index.js';
import { type ConsoleDeps, consoleServedHere } from '../console/index.js';
import type { DeliveryPipeline } from '../delivery/index.js';
import type { MatchEngine } from '../engine/index.js';
import type { DaemonIdentity } from '../identity/index.js';
import type { LoopGuard } from '../loops/index.js';
import type { Operations } from '../notifications/index.js';
import type { Metrics } from '../observability/index.js';
import type { TailServer } from '../server/index.js';
import { type App, buildApp, ReverseProxy } from '../server/index.js';
import type { HookService } from '../service/index.js';
import type { Tracing } from '../tracing/index.js';
import type { UserScopes } from '../users/index.js';
import { unverifiedState } from '../verification/index.js';
import { apiFeatures } from './api-routes.js';
import type { DaemonPlans } from './delivery-plans.js';
import type { listenServer } from './listen-wiring.js';
import type { OpenedStores } from './open-store.js';
import { portalParts } from './portal-wiring.js';
import type { ReloadResult } from './reload.js';
import type { RuntimeSettings } from './runtime-settings.js';
import type { StoreFaults } from './store-faults.js';

/**
 * What the daemon's front door (the reverse proxy and the API app with its features) is made of:
 * the parts createHookd has made by then, handed over by name.
 */
export interface FrontDoorParts {
  config: HookdConfig;
  log: Logger;
  opened: OpenedStores;
  settings: RuntimeSettings;
  faults: StoreFaults;
  metrics: Metrics;
  tracing: Tracing | undefined;
  identity: DaemonIdentity;
  users: UserScopes;
  hooks: HookService;
  engine: MatchEngine;
  deliveries: DeliveryPipeline;
  operations: Operations;
  loops: LoopGuard;
  tail: TailServer;
  listen: ReturnType<typeof listenServer>;
  /** The hooks' delivery plans: the API shows a hook's verification by its plan. */
  plans: DaemonPlans;
  reload: () => Promise<ReloadResult>;
  draining: () => boolean;
  storeReady: () => Promise<boolean>;
  /** The console listener's URL once it listens ('' before, or when off): portal links are made on it. */
  consoleUrl: () => string;
}

/** The reverse proxy in front of the service; undefined without `--upstream` (API only). */
export function reverseProxyFor(p: FrontDoorParts): ReverseProxy | undefined {
  const { config, settings, deliveries, tracing } = p;
  if (!config.upstream) return undefined;
  return new ReverseProxy({
    upstream: config.upstream,
    timeoutMs: config.upstreamTimeoutMs,
    engine: p.engine,
    uriOf: settings.uriOf,
    trusted: settings,
    log: p.log,
    onStatus: (status) => p.metrics.proxied(status),
    closing: p.draining,
    ...p.identity.proxy,
    recorded: () => deliveries.settled(),
    filterBodyLimit: config.filterBodyLimit,
    loops: p.loops,
    ...(tracing && { tracing }),
  });
}

/** The HTTP app: every API feature (src/http-api/), the console when on, the proxy behind them. */
export function frontDoorApp(p: FrontDoorParts, proxy: ReverseProxy | undefined): Promise<App> {
  const { config, hooks, deliveries, engine, settings, opened, users, identity, operations } = p;
  const hookStateView = withLastFilterError(
    unverifiedState(
      (h) => p.plans.ofHook(h).verification,
      () => deliveries.verifier,
    ),
    engine,
  );
  const consoleDeps: ConsoleDeps | undefined = consoleDepsOf(p, hookStateView);
  return buildApp({
    config,
    auth: identity.api,
    logger: p.log,
    eventsEnabled: () => settings.eventsEnabled,
    system: { draining: p.draining, storeReady: p.storeReady },
    mapError: p.faults.mapError,
    features: apiFeatures({
      hooks,
      hookStateView,
      report: {
        engine,
        deliveries,
        settings,
        faults: p.faults,
        tracing: p.tracing,
        opened,
        config,
        log: p.log,
        loops: p.loops,
      },
      reload: { reload: p.reload },
      deliveries: {
        hooks,
        pipeline: deliveries,
        base: config.apiBase,
        listenerAttempts: p.listen.attemptsOf,
      },
      users: { accounts: users.accounts, store: opened.store, hooks },
      operations,
      apiBase: config.apiBase,
      console: consoleDeps,
      portal: portalParts(config, opened, consoleDeps, p.consoleUrl),
    }),
    apiUpgrade: p.listen.upgrade,
    ...(proxy && { fallback: proxy.handle, fallbackUpgrade: proxy.handleUpgrade }),
  });
}

/** The web console's needs; undefined when it is switched off. */
function consoleDepsOf(
  p: FrontDoorParts,
  hookStateView: ReturnType<typeof unverifiedState>,
): ConsoleDeps | undefined {
  const { config, hooks, deliveries, engine, settings, opened, users, identity, operations } = p;
  return config.consoleEnabled
    ? {
        ...{
          base: config.apiBase,
          hooks,
          pipeline: deliveries,
          engine,
          users: opened.store,
          tail: p.tail,
        },
        ...{ auth: identity.api.tokens, identity: identity.api, accounts: users.accounts },
        deliveryStores: [opened.deliveries.durable, opened.deliveries.ephemeral],
        trustsProxy: (a) => settings.trusts(a),
        reportBase: (req) => settings.proxyBase(req.headers.host, req.socket.localPort),
        hookStateView,
        servedHere: consoleServedHere(config.consoleOnProxy === true),
        // The overview counts callbacks only: notification deliveries are not "Delivered" hooks.
        notificationEndpoints: (owner: string) => operations.notifier.list(owner).map((e) => e.Id),
      }
    : undefined;
}
