import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Authenticator } from '../auth/authenticator.js';
import type { HookdConfig } from '../config/config.js';
import { DirectSender } from '../delivery/direct-sender.js';
import { createPinnedDispatcher } from '../delivery/pinned-dispatcher.js';
import { MatchEngine } from '../engine/match-engine.js';
import { AddressPolicy } from '../policy/address-policy.js';
import { checkCallbackTarget } from '../policy/callback-target.js';
import { type App, buildApp } from '../server/app.js';
import { ReverseProxy } from '../server/proxy.js';
import { requestUriBuilder } from '../server/request-uri.js';
import { triggerRoutes } from '../server/routes/trigger-routes.js';
import { TrustedProxies } from '../server/trusted-proxies.js';
import { HookService } from '../service/hook-service.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';
import { bootstrapAdmin } from './bootstrap.js';

export const STORE_FILE = 'hookd.db';

export interface Hookd {
  readonly config: HookdConfig;
  readonly store: Store;
  readonly hooks: HookService;
  readonly engine: MatchEngine;
  readonly app: App;
  /** The base URL it listens on, e.g. `http://127.0.0.1:8470`. */
  url(): string;
  listen(): Promise<string>;
  /** Stops accepting, lets in-flight work finish within the drain deadline, closes the store. */
  close(): Promise<void>;
}

/** Assembles a daemon from its configuration: store, engine, delivery, HTTP app. Does not listen yet. */
export async function createHookd(config: HookdConfig, log: Logger): Promise<Hookd> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const store = new SqliteStore(join(config.dataDir, STORE_FILE));
  await bootstrapAdmin(store, config.dataDir, log);

  const policy = new AddressPolicy(config.allowCallbackNets);
  const hooks = new HookService(store, new MemoryStore(), {
    checkCallback: async (url) => {
      const r = await checkCallbackTarget(url, policy);
      return r.ok ? undefined : r.message;
    },
  });

  let draining = false;
  const eventsEnabled = config.eventsEnabled;
  const callbackDispatcher = createPinnedDispatcher(policy);
  const sink = new DirectSender(callbackDispatcher, log);
  const engine = new MatchEngine(sink, {
    enabled: () => eventsEnabled,
    onRenderError: (hook, err) =>
      log.warn({ hookId: hook.Id, err: err.message }, 'callback body not rendered'),
  });
  engine.load(await hooks.all());
  hooks.onChange(engine);

  const trusted = new TrustedProxies(config.trustedProxies);
  const uriOf = requestUriBuilder(config.publicBaseUrl, trusted);
  const proxy = config.upstream
    ? new ReverseProxy({
        upstream: config.upstream,
        timeoutMs: config.upstreamTimeoutMs,
        engine,
        uriOf,
        trusted,
        log,
      })
    : undefined;

  const app = await buildApp({
    config,
    hooks,
    auth: new Authenticator(store),
    logger: log,
    eventsEnabled: () => eventsEnabled,
    system: {
      draining: () => draining,
      storeReady: async () => {
        await store.listUsers();
        return true;
      },
    },
    extraRoutes: (api) => {
      triggerRoutes(
        api,
        engine,
        (req) => config.publicBaseUrl ?? `http://${req.headers.host ?? 'localhost'}`,
      );
    },
    ...(proxy && { fallback: proxy.handle, fallbackUpgrade: proxy.handleUpgrade }),
  });

  let boundUrl = '';
  return {
    config,
    store,
    hooks,
    engine,
    app,
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
          events: eventsEnabled,
          hooks: engine.size,
        },
        'listening',
      );
      return boundUrl;
    },
    async close() {
      draining = true;
      const server = app.server;
      const closed = app.fastify.close();
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
      timer.unref();
      await closed;
      clearTimeout(timer);
      await proxy?.close();
      await callbackDispatcher.close();
      await store.close();
    },
  };
}
