import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import { ClusterMember } from '../cluster/cluster-member.js';
import { Reclaimer } from '../cluster/reclaimer.js';
import { TailFanout } from '../cluster/tail-fanout.js';
import { DEFAULT_CLUSTER_LEASE_MS, type HookdConfig } from '../config/config.js';
import { DeliveryPipeline } from '../delivery/pipeline.js';
import type { RetrySchedule } from '../delivery/retry-policy.js';
import { connectTunnel, egressProxyOf } from '../egress/index.js';
import { MatchEngine } from '../engine/match-engine.js';
import { HookdError } from '../errors/catalog.js';
import type { Hook } from '../hook/hook.js';
import { assembleIdentity } from '../identity/assemble.js';
import { breakerEvents, Operations } from '../notifications/operations.js';
import { registerDeliveryMetrics } from '../observability/delivery-metrics.js';
import { Metrics } from '../observability/metrics.js';
import { closeServer, listenOn } from '../ops/listen.js';
import { OpsServer } from '../ops/ops-server.js';
import { orderingKeyOf } from '../ordering/index.js';
import { CidrError } from '../policy/address-policy.js';
import { checkCallbackTarget } from '../policy/callback-target.js';
import { type App, buildApp } from '../server/app.js';
import { ReverseProxy } from '../server/proxy.js';
import { type TailEvent, TailServer } from '../server/tail.js';
import { type HookChangeListener, HookService } from '../service/hook-service.js';
import type { Store } from '../store/store.js';
import { startTracing } from '../tracing/index.js';
import { migrateUserScopes, userScopes } from '../users/index.js';
import { packageInfo } from '../util/package-info.js';
import { rateLimitWithAllowedRate, unverifiedState, verificationModeFor } from '../verification/index.js';
import { registerApiRoutes } from './api-routes.js';
import { bootstrapAdmin } from './bootstrap.js';
import { deliveryOptions, hookSchedule, perHookDelivery } from './delivery-options.js';
import { openStores } from './open-store.js';
import { diffConfig, type ReloadResult } from './reload.js';
import { RuntimeSettings } from './runtime-settings.js';
import { storeFaults } from './store-faults.js';

export { STORE_FILE } from './open-store.js';

export interface Hookd {
  /** The configuration in force (after reloads). */
  readonly config: HookdConfig;
  readonly store: Store;
  readonly hooks: HookService;
  readonly engine: MatchEngine;
  readonly app: App;
  /** The base URL it listens on, e.g. `http://127.0.0.1:8470`. */
  url(): string;
  /** The operations listener's base URL (/metrics, /healthz, /readyz); '' when off or not listening. */
  opsUrl(): string;
  listen(): Promise<string>;
  /** Re-reads and applies the configuration (SIGHUP, `POST /reload`). */
  reload(): Promise<ReloadResult>;
  /** Stops accepting, lets in-flight work finish within the drain deadline, closes the store. */
  close(): Promise<void>;
}

export interface HookdOptions {
  /** Reads the configuration again (same flags, environment and file) for a reload. */
  reloadConfig?: () => HookdConfig;
}

/** Assembles a daemon from its configuration: store, engine, delivery, HTTP app. Does not listen yet. */
export async function createHookd(config: HookdConfig, log: Logger, opts: HookdOptions = {}): Promise<Hookd> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const opened = await openStores(config, log);
  const { store, cluster } = opened;
  const leaseMs = config.clusterLeaseMs ?? DEFAULT_CLUSTER_LEASE_MS;
  // Set below; the lease can only be lost once the pipeline runs.
  let pipeline: DeliveryPipeline | undefined;
  const member =
    cluster &&
    new ClusterMember({
      db: cluster.db,
      lease: cluster.lease,
      leaseMs,
      log,
      onLeaseLost: () => {
        const released = pipeline?.release() ?? 0;
        log.warn({ released }, 'cluster: pending deliveries let go (other instances take them over)');
      },
    });
  try {
    await member?.join();
    // Instances starting together on one database take turns: exactly one creates admin.
    const bootstrap = async () => {
      await bootstrapAdmin(store, config.dataDir, log);
      await migrateUserScopes(store, log);
    };
    await (store.exclusively ? store.exclusively(bootstrap) : bootstrap());
  } catch (err) {
    await member?.leave().catch(() => undefined);
    await store.close().catch(() => undefined);
    throw err;
  }

  // What assembly has started so far, undone in reverse if a later step fails (the database
  // connections would otherwise keep a failed start from exiting).
  const started: (() => Promise<unknown> | unknown)[] = [];
  const assemble = async (): Promise<Hookd> => {
    let current = config;
    const settings = new RuntimeSettings(config);
    const users = await userScopes(store);
    const tracing = await startTracing(config, process.env, log);
    if (tracing) started.push(() => tracing.shutdown());
    const faults = storeFaults(opened.deliveries.durable, log);
    const hooks = new HookService(
      store,
      opened.ephemeralHooks,
      {
        checkCallback: async (url) => {
          const r = await checkCallbackTarget(url, settings.policy);
          return r.ok ? undefined : r.message;
        },
      },
      users.checkPattern,
    );
    // The signing secret is made with the hook: delivery never waits on a first-use write.
    hooks.beforeCreate(async (hook) => void (await deliveries.secretFor(hook.Id, hook.Persist)));

    // Issue 24: endpoint verification (src/verification/).
    const verifyMode = verificationModeFor(() => engine, config.callbackVerification);
    // The pipeline asks per delivery whether its hook may still be sent to; the engine, which knows
    // every hook and its state, answers from memory (a map of its own would be 100,000 entries more).
    const deliveries: DeliveryPipeline = new DeliveryPipeline({
      durable: opened.deliveries.durable,
      ephemeral: opened.deliveries.ephemeral,
      policy: settings.policy,
      hookState: {
        isActive: (id) => engine.isActive(id) || operations.isActive(id),
        disable: (id) => operations.gone(id),
      },
      ...(config.retrySchedule && { schedule: { delaysMs: config.retrySchedule.map((sec) => sec * 1000) } }),
      scheduleFor: (id: string): RetrySchedule | undefined => hookSchedule(engine.get(id)),
      // Issue 24: v1/v1a per hook, or per notification endpoint.
      schemesFor: (id) => engine.get(id)?.Signature?.Schemes ?? operations.notifier.schemesOf(id),
      orderingKeyFor: (id, trigger) => orderingKeyOf(engine.get(id), trigger),
      verification: { modeFor: verifyMode },
      ...(config.callbackProxy && {
        tunnel: connectTunnel(egressProxyOf(config.callbackProxy, config.callbackProxyCredentialsFile)),
      }),
      ...perHookDelivery(
        (): MatchEngine => engine,
        (): Metrics => metrics,
        tracing,
      ),
      // Issue 24: a verified origin's WebHook-Allowed-Rate, unless the hook has its own RateLimit.
      rateLimitFor: rateLimitWithAllowedRate(
        () => engine,
        () => deliveries.verifier,
      ),
      logger: log,
      health: faults.health,
      ...deliveryOptions(config, { onTransition: breakerEvents(() => deliveries.events) }),
    });
    pipeline = deliveries;
    started.push(() => deliveries.close(0));
    const metrics = new Metrics(packageInfo().version, {
      outboxDepth: () => deliveries.stats().live,
      breakers: () => deliveries.breakers(),
      hooks: () => engine.size,
      tailClients: () => tail.clients,
    });
    registerDeliveryMetrics(metrics.registry, deliveries, faults.health);
    // Auto-disable, operational notifications and their routes (src/notifications/).
    const parts = { opened, deliveries, hooks, engine: () => engine, config, metrics, settings, log };
    const operations: Operations = new Operations(parts);
    started.push(() => operations.stop());
    deliveries.events.on('attempt', (m) => {
      metrics.attempt(m.Outcome, m.LatencyMs);
      const { HookId: hookId, DeliveryId: deliveryId, Attempt: attempt, Outcome: outcome } = m;
      const line = { hookId, deliveryId, attempt, status: m.StatusCode, durationMs: m.LatencyMs, outcome };
      log.info({ ...line, err: m.Error }, 'delivery attempt');
    });

    const engine: MatchEngine = new MatchEngine(deliveries, {
      enabled: () => settings.eventsEnabled,
      onRenderError: (hook, err) =>
        log.warn({ hookId: hook.Id, err: err.message }, 'callback body not rendered'),
      onFired: (phase, n) => metrics.fired(phase, n),
      scopes: users.scopes,
      redactUri: settings.redactUri,
      onSinkError: (err) => log.error({ err }, 'recording callbacks fired for an identified request failed'),
    });
    // What a hook change means for this process, whether made here or by another process.
    const follow: HookChangeListener = {
      hookSaved: (h) => {
        // Issue 24: a changed Callback is verified again before its next delivery.
        const before = engine.get(h.Id);
        if (before !== undefined && before.Callback !== h.Callback)
          deliveries.verifier?.forget(new URL(h.Callback).origin);
        engine.hookSaved(h);
      },
      hookDeleted: (id) => {
        engine.hookDeleted(id);
        deliveries.hookDeleted(id);
      },
    };
    hooks.onChange(follow);
    /**
     * A hook deleted by another process. In a cluster that process removed the stored deliveries
     * too (an instance through its pipeline, `hookd user remove` with the user): here only what
     * is held in memory goes. With SQLite, `hookd user remove` leaves the deliveries to the daemon.
     */
    const deletedElsewhere = (id: string): void => {
      engine.hookDeleted(id);
      deliveries.hookDeleted(id, cluster !== undefined);
    };
    /** Replaces every hook at once (start, or a resync after changes may have been missed). */
    const replaceAll = (all: Hook[]): void => {
      if (engine.size > 0) {
        const kept = new Set<string>();
        for (const h of all) kept.add(h.Id);
        const gone = [...engine.ids()].filter((id) => !kept.has(id));
        for (const id of gone) deletedElsewhere(id);
      }
      engine.load(all);
    };
    // Changes from elsewhere apply in the order they were read, after the initial load.
    let sync: Promise<void> = Promise.resolve();
    const serially = (what: string, fn: () => void | Promise<void>): void => {
      sync = sync.then(fn).catch((err: unknown) => log.error({ err }, `${what} failed`));
    };
    /** Reloads every hook after notifications may have been lost; tried again until it works. */
    const resyncAll = (): void =>
      serially('resync after a lost database connection', async () => {
        try {
          replaceAll(await hooks.all());
        } catch (err) {
          setTimeout(resyncAll, 1000).unref();
          throw err;
        }
        log.info({ hooks: engine.size }, 'hooks reloaded after the database connection came back');
      });
    // A shared database announces every committed hook change; each instance's index follows.
    const stopFollowing = await store.watchHookChanges?.({
      changed: (saved, deleted) =>
        serially('applying hook changes from the database', () => {
          for (const h of saved) follow.hookSaved(h);
          // Known here only if it was not this process that deleted it (it applied that already).
          for (const id of deleted) if (engine.get(id) !== undefined) deletedElsewhere(id);
        }),
      resync: () => {
        users.scopes.clear();
        resyncAll();
      },
      userChanged: (name) => users.scopes.changed(name),
      secretChanged: (id) => deliveries.secretChanged(id),
      failed: (err) => log.warn({ err }, 'fetching changed hooks failed; the next change or resync retries'),
    });
    if (stopFollowing) started.push(stopFollowing);
    serially('loading hooks', async () => replaceAll(await hooks.all()));
    await sync;
    // `hookd user remove` and friends write the SQLite file from another process: follow them.
    const stopWatching = stopFollowing
      ? undefined
      : store.watchExternalChanges?.(() => {
          serially('resync after an external store change', async () => {
            users.scopes.clear();
            const names = (await store.listUsers()).map((u) => u.name);
            replaceAll(await hooks.resync(new Set(names)));
            log.info({ hooks: engine.size }, 'store changed by another process: hooks reloaded');
          });
        });
    await operations.start();
    await deliveries.start();
    const reclaimer =
      cluster &&
      new Reclaimer({
        db: cluster.db,
        stores: [
          { store: opened.deliveries.durable, persist: true },
          { store: opened.deliveries.ephemeral, persist: false },
        ],
        adopt: (records, persist) => deliveries.adopt(records, persist),
        intervalMs: Math.min(1000, Math.max(100, Math.floor(leaseMs / 4))),
        log,
      });
    reclaimer?.start();
    if (reclaimer) started.push(() => reclaimer.stop());

    // The live tail sees this instance's events and, in a cluster, those of the others.
    const fanout = cluster && new TailFanout({ db: cluster.db, log });
    if (fanout) {
      let offPublish: (() => void) | undefined;
      fanout.onDemand((wanted) => {
        if (wanted && !offPublish) {
          const offFired = deliveries.events.on('fired', (m, owner) => fanout.publish({ ...m, owner }));
          const offAttempt = deliveries.events.on('attempt', (m, owner) => fanout.publish({ ...m, owner }));
          offPublish = () => {
            offFired();
            offAttempt();
          };
        } else if (!wanted && offPublish) {
          offPublish();
          offPublish = undefined;
        }
      });
      started.push(() => fanout.stop());
      await fanout.start();
    }

    const identity = assembleIdentity(config, store, settings, log, users.accounts);
    const tail = new TailServer({
      auth: identity.api,
      eventsEnabled: () => settings.eventsEnabled,
      log,
      source: {
        subscribe: (listener, filter) => {
          const offFired = deliveries.events.on('fired', (m, owner) => listener({ ...m, owner }));
          const offAttempt = deliveries.events.on('attempt', (m, owner) => listener({ ...m, owner }));
          const offRemote = fanout?.onRemote((e) => listener(e as TailEvent));
          if (filter) fanout?.watching(filter.owner, 1);
          return () => {
            offFired();
            offAttempt();
            offRemote?.();
            if (filter) fanout?.watching(filter.owner, -1);
          };
        },
      },
    });

    const proxy = config.upstream
      ? new ReverseProxy({
          upstream: config.upstream,
          timeoutMs: config.upstreamTimeoutMs,
          engine,
          uriOf: settings.uriOf,
          trusted: settings,
          log,
          onStatus: (status) => metrics.proxied(status),
          closing: () => draining,
          ...identity.proxy,
          recorded: () => deliveries.settled(),
          ...(tracing && { tracing }),
        })
      : undefined;

    const reload = async (): Promise<ReloadResult> => {
      try {
        const next = (opts.reloadConfig ?? (() => current))();
        settings.apply(next);
        log.level = next.logLevel;
        const result = diffConfig(current, next);
        // Keys that need a restart keep their running value, so `config` says what is in force.
        const kept = Object.fromEntries(
          result.restartRequired.map((k) => [k, current[k as keyof HookdConfig]]),
        );
        current = { ...next, ...kept };
        log.info(result, 'configuration reloaded');
        return result;
      } catch (err) {
        const message =
          err instanceof CidrError ? `allowCallbackNets: ${err.message}` : (err as Error).message;
        log.warn({ err: message }, 'reload refused; the running configuration is kept');
        throw new HookdError(
          'BAD_REQUEST',
          `the new configuration is invalid, so the running one is kept: ${message}`,
        );
      }
    };

    let draining = false;
    const app = await buildApp({
      config,
      hooks,
      auth: identity.api,
      logger: log,
      eventsEnabled: () => settings.eventsEnabled,
      system: { draining: () => draining, storeReady: () => storeReady() },
      mapError: faults.mapError,
      hookStateView: unverifiedState(verifyMode, () => deliveries.verifier),
      extraRoutes: (api) =>
        registerApiRoutes(api, {
          report: { engine, deliveries, settings, faults, tracing, opened, config, log },
          reload: { reload },
          deliveries: { hooks, pipeline: deliveries, base: config.apiBase },
          users: { accounts: users.accounts, store, hooks },
          operations,
          apiBase: config.apiBase,
          console: config.consoleEnabled
            ? {
                ...{ base: config.apiBase, hooks, pipeline: deliveries, engine, users: store, tail },
                ...{ auth: identity.api.tokens, identity: identity.api, accounts: users.accounts },
                deliveryStores: [opened.deliveries.durable, opened.deliveries.ephemeral],
                trustsProxy: (a) => settings.trusts(a),
                reportBase: (req) => settings.reportBase(req.headers.host),
              }
            : undefined,
        }),
      apiUpgrade: tail.handleUpgrade,
      ...(proxy && { fallback: proxy.handle, fallbackUpgrade: proxy.handleUpgrade }),
    });

    // /metrics, /healthz, /readyz: on a listener of their own, apart from the service's paths.
    // Ready: the store answers and takes writes (issue 13's fault tracking).
    const storeReady = async () => {
      await store.listUsers();
      return faults.health.available;
    };
    const opsServer = new OpsServer({ metrics, state: { draining: () => draining, storeReady } });
    let boundUrl = '';
    return {
      get config() {
        return current;
      },
      store,
      hooks,
      engine,
      app,
      reload,
      url: () => boundUrl,
      opsUrl: () => opsServer.url(),
      async listen() {
        // The Node server directly: Fastify's listen() would log a second start-up line.
        boundUrl = await listenOn(app.server, config.listen);
        const opsUrl = config.opsListen ? await opsServer.listen(config.opsListen) : null;
        // The one start-up line (docs/DECISIONS.md "Log lines").
        log.info(
          {
            ...{ url: boundUrl, opsUrl, upstream: config.upstream ?? null, dataDir: config.dataDir },
            ...{ store: opened.location, hooks: engine.size, version: packageInfo().version },
            ...(member && { instance: member.id }),
            ...{ apiBase: config.apiBase, events: settings.eventsEnabled },
          },
          'listening',
        );
        return boundUrl;
      },
      async close() {
        draining = true;
        stopWatching?.();
        stopFollowing?.();
        await tail.close();
        await fanout?.stop();
        const server = app.server;
        // hookd listened on the Node server itself (listen() above), so it closes it too.
        const closed = Promise.all([app.fastify.close(), closeServer(server)]);
        // A kept-alive connection that finishes its last response goes at once, not at the deadline.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        server.closeIdleConnections();
        const timer = setTimeout(() => server.closeAllConnections(), current.shutdownTimeoutMs);
        timer.unref();
        await closed;
        clearInterval(sweep);
        clearTimeout(timer);
        await proxy?.close();
        await reclaimer?.stop();
        // Attempts in flight get what is left of the drain deadline; the rest stays pending.
        await deliveries.close(current.shutdownTimeoutMs);
        if (member) {
          // Let go of what is still pending, so the other instances take it over at once rather
          // than after the lease runs out.
          const released = await Promise.all(
            [opened.deliveries.durable, opened.deliveries.ephemeral].map((d) =>
              (d.releasePending?.() ?? Promise.resolve(0)).catch((err: Error) => {
                log.warn({ err: err.message }, 'cluster: letting go of pending deliveries failed');
                return 0;
              }),
            ),
          );
          const n = released[0]! + released[1]!;
          if (n > 0) log.info({ deliveries: n }, 'cluster: pending deliveries handed to the other instances');
          await member.leave();
        }
        await opsServer.close();
        await store.close();
        faults.stop();
        await tracing?.shutdown();
      },
    };
  };
  try {
    return await assemble();
  } catch (err) {
    for (const undo of started.reverse())
      await Promise.resolve()
        .then(undo)
        .catch(() => undefined);
    await member?.leave().catch(() => undefined);
    await store.close().catch(() => undefined);
    throw err;
  }
}
