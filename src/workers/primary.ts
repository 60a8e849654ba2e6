import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { Counter, Gauge } from 'prom-client';
import type { HookdConfig } from '../config/index.js';
import { createHookd } from '../daemon/index.js';
import { stopOnSignals } from '../signals/index.js';
import { packageInfo } from '../util/index.js';
import { ENV_API, ENV_LOOP_KEY, ENV_PORT, ENV_SECRET } from './messages.js';
import { guardPrivateApi } from './private-api.js';
import { claimPublicAddress } from './public-socket.js';
import { WorkerHub } from './worker-hub.js';

/** The primary's API listens here; only its workers reach it (private-api.ts). */
const PRIVATE_LISTEN = { host: '127.0.0.1', port: 0 };

/**
 * The daemon's own `listening` line names the private port: renamed, so that the one `listening`
 * line (docs/DECISIONS.md "Log lines") is the public one written once every worker listens.
 */
function privateListening(log: Logger): Logger {
  return new Proxy(log, {
    get(target, prop) {
      if (prop === 'info')
        return (obj: unknown, msg?: string, ...rest: unknown[]) =>
          target.info(
            obj,
            msg === 'listening' ? 'primary listening privately for its workers' : msg,
            ...rest,
          );
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
    set(target, prop, value) {
      return Reflect.set(target, prop, value, target);
    },
  });
}

/** What the daemon's entry gets: close() drains the workers, then the primary. */
export interface Primary {
  reload(): Promise<void>;
  close(): Promise<void>;
}

/** The primary's /metrics counts every worker's too, and tells how many live and were replaced. */
function watchWorkers(hookd: Awaited<ReturnType<typeof createHookd>>, hub: WorkerHub): void {
  const registers = [hookd.metrics.registry];
  new Gauge({
    name: 'hookd_workers',
    help: 'Worker processes alive (--workers)',
    registers,
    collect() {
      this.set(hub.size);
    },
  });
  new Counter({
    name: 'hookd_worker_restarts_total',
    help: 'Worker processes started in place of one that died',
    registers,
    collect() {
      this.reset();
      this.inc(hub.restarts);
    },
  });
  hookd.metrics.mergeWith(() => hub.gatherMetrics());
}

/** Starts the primary (the whole daemon on a private port) and `cfg.workers` workers. */
export async function startPrimary(
  cfg: HookdConfig,
  log: Logger,
  reloadConfig?: () => HookdConfig,
): Promise<Primary> {
  const secret = randomBytes(32).toString('hex');
  const hookd = await createHookd(
    { ...cfg, listen: PRIVATE_LISTEN },
    privateListening(log),
    reloadConfig ? { reloadConfig: () => ({ ...reloadConfig(), listen: PRIVATE_LISTEN }) } : {},
  );
  let hub: WorkerHub | undefined;
  try {
    guardPrivateApi(hookd.app.server, secret);
    const privateUrl = await hookd.listen();
    // After the private port is bound, so that `--listen HOST:0` cannot be handed the same one.
    const at = await claimPublicAddress(cfg.listen);
    const reloadAll = () => {
      hookd.reload().then(
        () => hub?.broadcast({ t: 'reload' }),
        () => undefined,
      );
    };
    hub = new WorkerHub({
      count: cfg.workers ?? 1,
      hookd,
      env: {
        ...{ [ENV_API]: privateUrl, [ENV_SECRET]: secret, [ENV_LOOP_KEY]: hookd.loopKey },
        ...('port' in at && { [ENV_PORT]: String(at.port) }),
      },
      log,
      reloadAll,
    });
    hub.follow();
    watchWorkers(hookd, hub);
    hub.start();
    const url = await hub.listening();
    log.info(
      {
        ...{ url, opsUrl: hookd.opsUrl() || null, upstream: cfg.upstream ?? null, dataDir: cfg.dataDir },
        ...{ hooks: hookd.engine.size, version: packageInfo().version, workers: hub.size },
        ...{ apiBase: cfg.apiBase, events: cfg.eventsEnabled },
      },
      'listening',
    );
  } catch (err) {
    await hub?.stop(0);
    await hookd.close().catch(() => undefined);
    throw err;
  }
  const workers = hub;
  return {
    reload: async () => {
      await hookd.reload();
      workers.broadcast({ t: 'reload' });
    },
    close: async () => {
      await workers.stop(hookd.config.shutdownTimeoutMs);
      await hookd.close();
    },
  };
}

/** The daemon's run with workers: start, then SIGHUP reloads all, SIGTERM/SIGINT drain all (as runDaemon). */
export async function runPrimary(
  cfg: HookdConfig,
  log: Logger,
  reloadConfig?: () => HookdConfig,
): Promise<void> {
  const started = startPrimary(cfg, log, reloadConfig);
  // Taken before the start-up line can be seen, as runDaemon does: an early stop drains once up.
  stopOnSignals({
    log,
    drainMs: cfg.shutdownTimeoutMs,
    close: async () => {
      const primary = await started.catch(() => undefined);
      await primary?.close();
    },
    exitNow: (code) => process.exit(code),
  });
  const primary = await started;
  process.on('SIGHUP', () => {
    primary.reload().catch(() => undefined);
  });
}
