import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Authenticator } from '../auth/authenticator.js';
import type { HookdConfig } from '../config/config.js';
import { DeliveryPipeline } from '../delivery/pipeline.js';
import { MatchEngine } from '../engine/match-engine.js';
import { HookdError } from '../errors/catalog.js';
import type { HookState } from '../hook/hook.js';
import { Metrics } from '../observability/metrics.js';
import { CidrError } from '../policy/address-policy.js';
import { checkCallbackTarget } from '../policy/callback-target.js';
import { type App, buildApp } from '../server/app.js';
import { ReverseProxy } from '../server/proxy.js';
import { deliveryRoutes } from '../server/routes/deliveries.js';
import { metricsRoutes } from '../server/routes/metrics.js';
import { reloadRoutes } from '../server/routes/reload.js';
import { tailRoute } from '../server/routes/tail-route.js';
import { triggerRoutes } from '../server/routes/trigger-routes.js';
import { TailServer } from '../server/tail.js';
import { HookService } from '../service/hook-service.js';
import { MemoryDeliveryStore } from '../store/memory/memory-delivery-store.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import { SqliteDeliveryStore } from '../store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';
import { packageInfo } from '../util/package-info.js';
import { bootstrapAdmin } from './bootstrap.js';
import { diffConfig, type ReloadResult } from './reload.js';
import { RuntimeSettings } from './runtime-settings.js';

export const STORE_FILE = 'hookd.db';

export interface Hookd {
  /** The configuration in force (after reloads). */
  readonly config: HookdConfig;
  readonly store: Store;
  readonly hooks: HookService;
  readonly engine: MatchEngine;
  readonly app: App;
  /** The base URL it listens on, e.g. `http://127.0.0.1:8470`. */
  url(): string;
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
  const store = new SqliteStore(join(config.dataDir, STORE_FILE), { backgroundCheckpoint: true });
  await bootstrapAdmin(store, config.dataDir, log);

  let current = config;
  const settings = new RuntimeSettings(config);
  const hooks = new HookService(store, new MemoryStore(), {
    checkCallback: async (url) => {
      const r = await checkCallbackTarget(url, settings.policy);
      return r.ok ? undefined : r.message;
    },
  });

  // The pipeline asks per delivery whether its hook may still be sent to; answered from memory.
  const states = new Map<string, HookState>();
  for (const h of await hooks.all()) states.set(h.Id, h.State);
  const pipeline = new DeliveryPipeline({
    durable: new SqliteDeliveryStore(store.db),
    ephemeral: new MemoryDeliveryStore(),
    policy: settings.policy,
    hookState: {
      isActive: (id) => states.get(id) === 'active',
      disable: async (id) => {
        await hooks.setState(id, 'disabled');
      },
    },
    logger: log,
  });
  const metrics = new Metrics(packageInfo().version, {
    outboxDepth: () => pipeline.stats().live,
    breakers: () => pipeline.breakers(),
    hooks: () => engine.size,
    tailClients: () => tail.clients,
  });
  pipeline.events.on('attempt', (m) => {
    metrics.attempt(m.Outcome, m.LatencyMs);
    log.info(
      {
        hookId: m.HookId,
        deliveryId: m.DeliveryId,
        attempt: m.Attempt,
        status: m.StatusCode,
        ms: m.LatencyMs,
        outcome: m.Outcome,
        err: m.Error,
      },
      'delivery attempt',
    );
  });

  const engine = new MatchEngine(pipeline, {
    enabled: () => settings.eventsEnabled,
    onRenderError: (hook, err) =>
      log.warn({ hookId: hook.Id, err: err.message }, 'callback body not rendered'),
    onFired: (phase, n) => metrics.fired(phase, n),
  });
  engine.load(await hooks.all());
  hooks.onChange(engine);
  hooks.onChange({
    hookSaved: (h) => states.set(h.Id, h.State),
    hookDeleted: (id) => {
      states.delete(id);
      pipeline.hookDeleted(id);
    },
  });
  // `hookd user remove` and friends write the store from another process: follow them.
  const stopWatching = store.watchExternalChanges?.(() => {
    store
      .listUsers()
      .then((users) => hooks.resync(new Set(users.map((u) => u.name))))
      .then((all) => {
        const gone = new Set(states.keys());
        states.clear();
        for (const h of all) {
          states.set(h.Id, h.State);
          gone.delete(h.Id);
        }
        for (const id of gone) pipeline.hookDeleted(id);
        engine.load(all);
        log.info({ hooks: engine.size }, 'store changed by another process: hooks reloaded');
      })
      .catch((err: unknown) => log.error({ err }, 'resync after an external store change failed'));
  });
  await pipeline.start();

  const auth = new Authenticator(store);
  const tail = new TailServer({
    auth,
    eventsEnabled: () => settings.eventsEnabled,
    log,
    source: {
      subscribe: (listener) => {
        const offFired = pipeline.events.on('fired', (m, owner) => listener({ ...m, owner }));
        const offAttempt = pipeline.events.on('attempt', (m, owner) => listener({ ...m, owner }));
        return () => {
          offFired();
          offAttempt();
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
      const message = err instanceof CidrError ? `allowCallbackNets: ${err.message}` : (err as Error).message;
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
    auth,
    logger: log,
    eventsEnabled: () => settings.eventsEnabled,
    system: {
      draining: () => draining,
      storeReady: async () => {
        await store.listUsers();
        return true;
      },
    },
    extraRoutes: (api) => {
      triggerRoutes(api, engine, (req) => settings.reportBase(req.headers.host));
      reloadRoutes(api, { reload });
      deliveryRoutes(api, { hooks, pipeline, base: config.apiBase });
      metricsRoutes(api, metrics);
      tailRoute(api);
    },
    apiUpgrade: tail.handleUpgrade,
    ...(proxy && { fallback: proxy.handle, fallbackUpgrade: proxy.handleUpgrade }),
  });

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
    async listen() {
      await app.fastify.listen({ host: config.listen.host, port: config.listen.port });
      const addr = app.server.address() as AddressInfo;
      const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      boundUrl = `http://${host}:${addr.port}`;
      log.info(
        {
          url: boundUrl,
          dataDir: config.dataDir,
          upstream: config.upstream ?? null,
          apiBase: config.apiBase,
          events: settings.eventsEnabled,
          hooks: engine.size,
        },
        'listening',
      );
      return boundUrl;
    },
    async close() {
      draining = true;
      stopWatching?.();
      await tail.close();
      const server = app.server;
      const closed = app.fastify.close();
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), current.shutdownTimeoutMs);
      timer.unref();
      await closed;
      clearTimeout(timer);
      await proxy?.close();
      // Attempts in flight get what is left of the drain deadline; the rest stays pending.
      await pipeline.close(current.shutdownTimeoutMs);
      await store.close();
    },
  };
}
