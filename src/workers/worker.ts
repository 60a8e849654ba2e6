import { createServer } from 'node:http';
import type { Logger } from 'pino';
import type { HookdConfig } from '../config/index.js';
import { RuntimeSettings } from '../daemon/index.js';
import { clientErrorAnswer } from '../edge/index.js';
import { MatchEngine } from '../engine/index.js';
import type { Hook } from '../hook/index.js';
import { internHook } from '../hook/index.js';
import { identityProviderFrom, requestUserResolver } from '../identity/index.js';
import { DEFAULT_LINGER, lingeringResponse } from '../linger/index.js';
import { LoopGuard, LoopMarker } from '../loops/index.js';
import { Metrics } from '../observability/index.js';
import { closeServer } from '../ops/index.js';
import { apiPathMatcher, ReverseProxy } from '../server/index.js';
import type { UserRecord } from '../store/index.js';
import { startTracing } from '../tracing/index.js';
import { TransportRegistry } from '../transports/index.js';
import { OwnerScopes } from '../users/index.js';
import { packageInfo, withoutYoungGrowth } from '../util/index.js';
import { ApiForwarder } from './api-forward.js';
import { IpcSink } from './ipc-sink.js';
import {
  type Ask,
  ENV_API,
  ENV_LOOP_KEY,
  ENV_PORT,
  ENV_SECRET,
  type FromWorker,
  type ToWorker,
} from './messages.js';
import { listenPublic } from './public-socket.js';

/** How often a worker forgets cached owner scopes (a change made through another PostgreSQL instance). */
const SCOPES_TTL_MS = 5000;

/**
 * One worker (docs/DECISIONS.md "Using every core: workers"): the proxy and the matching on the
 * shared socket, the API passed on to the primary, fired callbacks sent to it. Holds nothing durable.
 */
export async function runWorker(
  cfg: HookdConfig,
  log: Logger,
  reloadConfig?: () => HookdConfig,
): Promise<void> {
  const send = (m: FromWorker): void => {
    if (process.connected) process.send?.(m);
  };
  let asked = 0;
  const replies = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const ask = <T>(a: Ask): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = ++asked;
      replies.set(id, { resolve: resolve as (v: unknown) => void, reject });
      send({ t: 'ask', id, ...a });
    });

  const settings = new RuntimeSettings(cfg);
  // What this worker counts (the proxy's statuses, fired hooks, loops cut, names refused); the
  // primary merges it into its /metrics at every scrape.
  const metrics = new Metrics(packageInfo().version);
  let current = cfg;
  const sink = new IpcSink(send);
  const scopes = new OwnerScopes({
    getUser: (name) => ask<UserRecord | undefined>({ what: 'getUser', name }),
    listUsers: () => ask<UserRecord[]>({ what: 'listUsers' }),
  });
  // Broker Callback URLs take template values, escaped as their transport says.
  const transports = new TransportRegistry();
  const engine = new MatchEngine(sink, {
    enabled: () => settings.eventsEnabled,
    onRenderError: (hook, err) =>
      log.warn({ hookId: hook.Id, err: err.message }, 'callback body not rendered'),
    onStoredPatternError: (hook, err) =>
      log.error(
        { hookId: hook.Id, err: err.message },
        'stored hook left out: its PathPattern does not compile',
      ),
    scopes,
    redactUri: settings.redactUri,
    onFired: (phase, n) => metrics.fired(phase, n),
    onSinkError: (err) => log.error({ err }, 'recording callbacks fired for an identified request failed'),
    callbackEscape: (callback) => transports.escapeFor(callback),
    code: {
      transform: {
        limits: {
          timeMs: cfg.transformTimeLimit,
          memoryBytes: cfg.transformMemoryLimit,
          outputBytes: cfg.transformOutputLimit,
        },
      },
    },
  });

  let gathering: Hook[] = [];
  // The hook set arrives in chunks and all of it lives on, as at the primary's start-up: the
  // young generation is held at its size until the set is loaded (src/util/young-generation.ts).
  let loadDone: (() => void) | undefined;
  const holdYoungGeneration = (): void => {
    if (loadDone === undefined)
      void withoutYoungGrowth(() => new Promise<void>((resolve) => (loadDone = resolve)));
  };
  let firstSet: (() => void) | undefined;
  const loaded = new Promise<void>((resolve) => {
    firstSet = resolve;
  });
  let stop: (() => void) | undefined;
  process.on('message', (raw: unknown) => {
    const m = raw as ToWorker;
    switch (m.t) {
      case 'hooks':
        holdYoungGeneration();
        // Shared values at once, so that each hook's own copies die young (intern-hook.ts).
        for (const h of m.hooks) gathering.push(internHook(h));
        return;
      case 'set':
        engine.load(gathering);
        gathering = [];
        loadDone?.();
        loadDone = undefined;
        scopes.clear();
        firstSet?.();
        firstSet = undefined;
        return send({ t: 'applied', seq: m.seq });
      case 'saved':
        engine.hookSaved(m.hook);
        return send({ t: 'applied', seq: m.seq });
      case 'deleted':
        engine.hookDeleted(m.id);
        return send({ t: 'applied', seq: m.seq });
      case 'users':
        scopes.clear();
        return send({ t: 'applied', seq: m.seq });
      case 'ack':
        return sink.acknowledged(m.n);
      case 'reply': {
        const r = replies.get(m.id);
        replies.delete(m.id);
        if (m.error !== undefined) r?.reject(new Error(m.error));
        else r?.resolve(m.value);
        return;
      }
      case 'reload':
        try {
          const next = (reloadConfig ?? (() => cfg))();
          settings.apply(next);
          log.level = next.logLevel;
          current = next;
        } catch (err) {
          log.warn(
            { err: (err as Error).message },
            'worker: reload refused; the running configuration is kept',
          );
        }
        return;
      case 'metrics':
        return void metrics
          .snapshot()
          .then((snapshot) => send({ t: 'metrics', id: m.id, metrics: snapshot }));
      case 'stop':
        return stop?.();
    }
  });
  send({ t: 'hello' });
  // The primary is gone: nothing fired from now on could be recorded, and nothing not yet
  // acknowledged will be. Ending at once cuts those responses, which is the truth.
  process.on('disconnect', () => process.exit(sink.unacknowledged === 0 ? 0 : 1));

  await loaded;
  await scopes.loadAll();
  setInterval(() => scopes.clear(), SCOPES_TTL_MS).unref();

  const provider = identityProviderFrom(cfg, settings);
  const tracing = await startTracing(cfg, process.env, log);
  let draining = false;
  const proxy = cfg.upstream
    ? new ReverseProxy({
        upstream: cfg.upstream,
        timeoutMs: cfg.upstreamTimeoutMs,
        engine,
        uriOf: settings.uriOf,
        trusted: settings,
        log,
        onStatus: (status) => metrics.proxied(status),
        closing: () => draining,
        recorded: () => sink.recorded(),
        filterBodyLimit: cfg.filterBodyLimit,
        // hookd's own requests fire nothing here either (the primary's key).
        loops: new LoopGuard(LoopMarker.fromKey(process.env[ENV_LOOP_KEY] ?? ''), (kind) =>
          metrics.loopCut(kind),
        ),
        ...(provider && {
          requestUser: requestUserResolver(provider, log, () => metrics.identityNameRefused()),
        }),
        ...(provider?.guardedHeader !== undefined && { guardedHeader: provider.guardedHeader }),
        ...(tracing && { tracing }),
      })
    : undefined;
  const api = new ApiForwarder({
    primary: process.env[ENV_API] ?? '',
    secret: process.env[ENV_SECRET] ?? '',
    reloadPath: `${cfg.apiBase === '/' ? '' : cfg.apiBase}/_hookd/reload`,
    barrier: () => ask<void>({ what: 'barrier' }),
    reloadAll: () => send({ t: 'reload-all' }),
  });
  const isApi = apiPathMatcher(cfg.apiBase);
  const lingering = lingeringResponse(cfg.linger ?? DEFAULT_LINGER);
  const server = createServer({ keepAliveTimeout: 65_000, ServerResponse: lingering }, (req, res) => {
    if (draining) res.setHeader('connection', 'close');
    if (proxy === undefined || isApi(req.url ?? '/')) api.request(req, res);
    else proxy.handle(req, res);
  });
  server.on('clientError', clientErrorAnswer(log));
  server.on('upgrade', (req, socket, head: Buffer) => {
    if (proxy === undefined || isApi(req.url ?? '/')) api.upgrade(req, socket, head);
    else proxy.handleUpgrade(req, socket, head, server);
  });
  const claimed = process.env[ENV_PORT];
  const at =
    'path' in cfg.listen || claimed === undefined ? cfg.listen : { ...cfg.listen, port: Number(claimed) };
  const url = await listenPublic(
    server,
    at,
    {
      ...(cfg.listenMode !== undefined && { mode: cfg.listenMode }),
      ...(cfg.listenGroup !== undefined && { group: cfg.listenGroup }),
    },
    log,
  );
  send({ t: 'listening', url });

  // Stop accepting, let in-flight requests (and their AfterCompletion acknowledgements) finish
  // within the drain deadline, then leave.
  let stopping = false;
  stop = () => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      draining = true;
      const closed = closeServer(server);
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), current.shutdownTimeoutMs);
      timer.unref();
      await closed;
      clearInterval(sweep);
      clearTimeout(timer);
      await proxy?.close();
      await tracing?.shutdown();
      process.exit(0);
    })();
  };
  process.on('SIGTERM', () => stop?.());
  process.on('SIGINT', () => stop?.());
  // SIGHUP goes to the primary, which tells every worker.
  process.on('SIGHUP', () => undefined);
}
