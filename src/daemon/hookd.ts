import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import { DEFAULT_CLUSTER_LEASE_MS, type HookdConfig } from '../config/index.js';
import { consoleListenerFor } from '../console/index.js';
import type { DeliveryPipeline } from '../delivery/index.js';
import { MatchEngine } from '../engine/index.js';
import { assembleIdentity } from '../identity/index.js';
import { LoopGuard, LoopMarker, selfTargetRefusal } from '../loops/index.js';
import { Operations } from '../notifications/index.js';
import { Metrics, registerDeliveryMetrics, registerThreadMetrics } from '../observability/index.js';
import { OpsServer } from '../ops/index.js';
import type { App } from '../server/index.js';
import { TailServer } from '../server/index.js';
import type { HookService } from '../service/index.js';
import type { Store } from '../store/index.js';
import { startTracing } from '../tracing/index.js';
import { callbackHeaderCheck, callbackSchemeCheck, TransportRegistry } from '../transports/index.js';
import { migrateUserScopes, userScopes } from '../users/index.js';
import { packageInfo } from '../util/index.js';
import { bootstrapAdmin } from './bootstrap.js';
import { joinCluster, LeaseLoss, startReclaimer, startTailFanout } from './cluster-parts.js';
import { daemonPlans } from './delivery-plans.js';
import { createDeliveries, deliveryThreadsFor, egressOf, recordAttempts } from './delivery-wiring.js';
import { drainListener } from './drain.js';
import { type FrontDoorParts, frontDoorApp, reverseProxyFor } from './front-door.js';
import { followHookChanges } from './hook-following.js';
import { hookServiceFor } from './hook-service-wiring.js';
import { Lifecycle } from './lifecycle.js';
import { listenAll } from './listen-all.js';
import { listenServer } from './listen-wiring.js';
import { openStores } from './open-store.js';
import { configReloader, type ReloadResult } from './reload.js';
import { retransformer } from './retransform.js';
import { RuntimeSettings } from './runtime-settings.js';
import { storeFaults } from './store-faults.js';
import { tailSource } from './tail-source.js';

export { STORE_FILE } from './open-store.js';

export interface Hookd {
  /** The configuration in force (after reloads). */
  readonly config: HookdConfig;
  readonly store: Store;
  readonly hooks: HookService;
  readonly engine: MatchEngine;
  readonly app: App;
  /** Where workers' (src/workers/) fired callbacks go, and when they are recorded. */
  readonly deliveries: Pick<DeliveryPipeline, 'accept' | 'settled'>;
  /** Its Prometheus metrics; a primary merges its workers' into them. */
  readonly metrics: Pick<Metrics, 'mergeWith' | 'registry'>;
  /** The loop-mark key (src/loops/), handed to the workers so their proxies cut loops too. */
  readonly loopKey: string;
  /** The base URL it listens on, e.g. `http://127.0.0.1:8470`. */
  url(): string;
  /** The operations listener's base URL (/metrics, /healthz, /readyz); '' when off or not listening. */
  opsUrl(): string;
  /** The web console's own listener's base URL; '' when off or not listening. */
  consoleUrl(): string;
  /**
   * Opens the listeners; `ready` runs with the API's URL once they are up and before the start-up
   * line is written (the address file, so that it exists when the line is seen).
   */
  listen(ready?: (url: string) => void): Promise<string>;
  /** Re-reads and applies the configuration (SIGHUP, `POST /reload`). */
  reload(): Promise<ReloadResult>;
  /** Stops accepting, lets in-flight work finish within the drain deadline, closes the store. */
  close(): Promise<void>;
}

export interface HookdOptions {
  /** Reads the configuration again (same flags, environment and file) for a reload. */
  reloadConfig?: () => HookdConfig;
}

/**
 * Assembles a daemon from its configuration: store, engine, delivery, HTTP app. Does not listen
 * yet. The order of the steps is the order of making; every part registers its stop with `life`
 * as it is made, and both close() and the rollback of a failed start run that one list in reverse.
 */
export async function createHookd(config: HookdConfig, log: Logger, opts: HookdOptions = {}): Promise<Hookd> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const life = new Lifecycle(log);
  const opened = await openStores(config, log);
  life.defer('store', () => opened.close());
  life.defer('secrets key file', async () => opened.unfollowKeyFile());
  try {
    return await assemble(config, log, opts, life, opened);
  } catch (err) {
    await life.stop(0).catch(() => undefined);
    throw err;
  }
}

async function assemble(
  config: HookdConfig,
  log: Logger,
  opts: HookdOptions,
  life: Lifecycle,
  opened: Awaited<ReturnType<typeof openStores>>,
): Promise<Hookd> {
  const { store, cluster } = opened;
  const leaseMs = config.clusterLeaseMs ?? DEFAULT_CLUSTER_LEASE_MS;
  // The lease can only be lost once the pipeline runs; it lets go of its deliveries then.
  const leaseLoss = new LeaseLoss();
  const member = await joinCluster(opened, leaseMs, leaseLoss, log, life);
  // Instances starting together on one database take turns: exactly one creates admin.
  const bootstrap = async () => {
    await bootstrapAdmin(store, config.dataDir, log);
    await migrateUserScopes(store, log);
  };
  await store.coordination.exclusively(bootstrap);

  const settings = new RuntimeSettings(config);
  // The threads that send the callbacks start with the pipeline; a reload hands them the new
  // address policy, as it hands the settings.
  const egress = egressOf(config);
  const threads = deliveryThreadsFor(config, egress);
  const reloader = configReloader(config, settings, log, opts.reloadConfig, (next) =>
    threads?.setAllowedNets(next.allowCallbackNets),
  );
  const users = await userScopes(store);
  const tracing = await startTracing(config, process.env, log);
  if (tracing) life.defer('tracing', () => tracing.shutdown());
  const faults = storeFaults(opened.deliveries.durable, log);
  life.defer('store fault tracking', () => faults.stop());
  let draining = false;
  const metrics = new Metrics(packageInfo().version);
  // /metrics, /healthz, /readyz: on a listener of their own, apart from the service's paths. It
  // stays up until the deliveries have drained, so that probes see the drain (503 on /readyz).
  // Ready: the store answers and takes writes (the store's fault tracking).
  const storeReady = async () => {
    await store.listUsers();
    return faults.health.available;
  };
  let boundUrl = '';
  const deliveryThreads = () => threads?.stats() ?? { running: 0, configured: 0, threads: [] };
  const opsServer = new OpsServer({
    metrics,
    state: { draining: () => draining, storeReady, deliveryThreads },
  });
  life.defer('operations listener', () => opsServer.close());
  // A Callback or notification Url at hookd's own address is a known loop (src/loops/).
  const selfTarget = (url: URL) =>
    selfTargetRefusal(url, { listening: boundUrl, publicBaseUrl: reloader.current().publicBaseUrl });
  // The transports by Callback scheme: the hook service checks Callbacks by them, the pipeline
  // sends through them, the engine escapes template values in broker Callback URLs as they say.
  const transports = new TransportRegistry();
  const checkScheme = callbackSchemeCheck(transports, config.callbackSchemes);

  // The cluster's marker key from the store; marks what hookd sends, cuts loops.
  const marker = await LoopMarker.open(opened.deliveries.durable);
  const loops = new LoopGuard(marker, (kind) => metrics.loopCut(kind));
  // Each hook's and endpoint's delivery plan: the engine and the notifications send through the
  // pipeline, so they are made after it and attached to the plans below.
  const plans = daemonPlans(config, log);
  const deliveries = createDeliveries({
    ...{ transports, plans, config, opened, settings, faults, tracing, metrics, log, egress, threads },
    loopMark: (h, kind, method, target) => loops.mark(h, kind, method, target),
  });
  leaseLoss.releaseWith(() => deliveries.release());
  metrics.observe({ outboxDepth: () => deliveries.stats().live, breakers: () => deliveries.breakers() });
  registerDeliveryMetrics(metrics.registry, deliveries, faults.health);
  registerThreadMetrics(metrics.registry, { stats: deliveryThreads });
  // Attempts in flight get what is left of the drain deadline; the rest stays pending.
  life.defer('delivery', () => deliveries.close(life.remaining()));
  const hooks = hookServiceFor({
    opened,
    settings,
    users,
    selfTarget,
    checkScheme,
    checkHeaders: callbackHeaderCheck(transports),
    schemes: transports.schemes,
  });

  const engine: MatchEngine = new MatchEngine(deliveries, {
    enabled: () => settings.eventsEnabled,
    onRenderError: (hook, err) =>
      log.warn({ hookId: hook.Id, err: err.message }, 'callback body not rendered'),
    onStoredPatternError: (hook, err) =>
      log.error(
        { hookId: hook.Id, err: err.message },
        'stored hook left out: its PathPattern does not compile',
      ),
    onFired: (phase, n) => metrics.fired(phase, n),
    scopes: users.scopes,
    redactUri: settings.redactUri,
    onSinkError: (err) => log.error({ err }, 'recording callbacks fired for an identified request failed'),
    callbackEscape: (callback) => transports.escapeFor(callback),
    code: {
      transform: {
        limits: {
          timeMs: config.transformTimeLimit,
          memoryBytes: config.transformMemoryLimit,
          outputBytes: config.transformOutputLimit,
        },
      },
    },
  });
  metrics.observe({ hooks: () => engine.size, filterErrors: () => engine.code.filterErrors });
  life.defer('transforms', () => engine.code.close());
  deliveries.transformWith(retransformer(engine));
  // Auto-disable, operational notifications and their routes (src/notifications/). They stop
  // after the pipeline has drained, so that its last attempts still count.
  const operations: Operations = new Operations({
    ...{ opened, deliveries, hooks, engine: () => engine, config, metrics, settings, selfTarget, log },
  });
  life.defer('notifications', () => operations.stop());
  plans.attach(engine, {
    isActive: (id) => operations.isActive(id),
    gone: (id) => operations.gone(id),
    schemesOf: (id) => operations.notifier.schemesOf(id),
  });
  recordAttempts(deliveries, metrics, log, transports);
  const clustered = cluster !== undefined;
  await followHookChanges({
    ...{ store, hooks, engine, deliveries, users, clustered, log, life },
    counted: (source, result) => metrics.hookChange(source, result),
  });
  await operations.start();
  await deliveries.start();
  startReclaimer(cluster, opened, deliveries, leaseMs, log, life);
  const fanout = await startTailFanout(cluster, deliveries, log, life);

  const identity = assembleIdentity(config, store, settings, log, users.accounts, () =>
    metrics.identityNameRefused(),
  );
  const tail = new TailServer({
    auth: identity.api,
    eventsEnabled: () => settings.eventsEnabled,
    log,
    source: tailSource(deliveries, fanout),
  });
  metrics.observe({ tailClients: () => tail.clients });
  // `hookctl listen` relays (src/listen/); its socket shares the API's upgrades with the tail.
  const listen = listenServer({ identity, settings, log, deliveries, hooks, opened, tail, fanout });
  life.defer('listen relays', () => listen.close());
  let consoleListener: ReturnType<typeof consoleListenerFor> | undefined;
  const door: FrontDoorParts = {
    ...{ config, log, opened, settings, faults, metrics, tracing, identity, users, hooks, engine },
    ...{ deliveries, operations, loops, tail, listen, plans, reload: reloader.reload },
    draining: () => draining,
    storeReady,
    // The console listener is made from the app, after it: asked only when a portal link is made.
    consoleUrl: () => consoleListener?.url() ?? '',
  };
  const proxy = reverseProxyFor(door);
  if (proxy) life.defer('reverse proxy', () => proxy.close());
  const app = await frontDoorApp(door, proxy);
  // The console on its own origin (src/console/listener.ts); stops after the API drained.
  consoleListener = consoleListenerFor(config, app.apiOnly);
  life.defer('console listener', () => consoleListener.close());
  // The first to stop: the front door closes, in-flight requests finish within the drain time.
  life.defer('API listener', () => {
    draining = true;
    // Proxied tunnels are left to finish until the deadline: they are the service's, not ours.
    const tunnels = proxy && { terminate: () => proxy.closeTunnels() };
    return drainListener(app, life.remaining(), tunnels ? [tail, listen, tunnels] : [tail, listen]);
  });

  return {
    get config() {
      return reloader.current();
    },
    store,
    hooks,
    engine,
    app,
    deliveries, // the workers' fired callbacks (src/workers/)
    metrics,
    loopKey: marker.exportKey(),
    reload: reloader.reload,
    url: () => boundUrl,
    opsUrl: () => opsServer.url(),
    consoleUrl: () => consoleListener.url(),
    async listen(ready) {
      boundUrl = await listenAll({
        config,
        app,
        opsServer,
        consoleListener,
        log,
        opened,
        engine,
        settings,
        member,
        ready: (url) => {
          settings.proxyListening(url);
          ready?.(url);
        },
      });
      return boundUrl;
    },
    close: () => life.stop(reloader.current().shutdownTimeoutMs),
  };
}
