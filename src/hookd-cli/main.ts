import { Command, CommanderError, Option } from 'commander';
import type { Logger } from 'pino';
import { removeAddrFile, writeAddrFile } from '../addr-file/index.js';
import { loadOperatorTls } from '../client-tls/index.js';
import type { HookdConfig } from '../config/index.js';
import { ALL_OPTIONS, ConfigError, loadConfig } from '../config/index.js';
import { createHookd, createLogger, RuntimeSettings, stopWithParent } from '../daemon/index.js';
import { HookdError } from '../errors/index.js';
import { identityProviderFrom } from '../identity/index.js';
import { loadBrandFile } from '../portal/index.js';
import { SecretsKeyError } from '../secrets/index.js';
import { stopOnSignals } from '../signals/index.js';
import { DatabaseUnavailableError, SchemaTooNewError } from '../store/index.js';
import { packageInfo } from '../util/index.js';
// --workers N: a primary and N proxy workers (src/workers/).
import { isWorkerProcess, runPrimary, runWorker } from '../workers/index.js';
import { addAdminCommands } from './admin-commands.js';

/** hookd's exit codes (man hookd): 0 clean stop, 1 runtime failure, 2 usage or configuration. */
export const EXIT = { OK: 0, FAILURE: 1, CONFIG: 2 } as const;

function daemonOptions(cmd: Command): Command {
  cmd.option('-c, --config <file>', 'JSON config file (also HOOKD_CONFIG)');
  for (const o of ALL_OPTIONS) {
    const opt = new Option(o.flag, o.description);
    if (o.repeatable) opt.argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
    cmd.addOption(opt);
  }
  return cmd;
}

/** commander's option names → config keys (`--no-events` arrives as `events: false`). */
/** commander's parsed options → config keys, through the one options table. */
function flagsOf(opts: Record<string, unknown>): Record<string, unknown> {
  const flags: Record<string, unknown> = {};
  for (const o of ALL_OPTIONS) {
    const long = o.flag.split(' ')[0]!;
    // commander names `--shutdown-timeout` shutdownTimeout, and `--no-events` events (false when given).
    const attr = long.replace(/^--(no-)?/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const v = opts[attr];
    if (v === undefined) continue;
    if (long.startsWith('--no-')) {
      if (v === false) flags[o.key] = false;
    } else {
      flags[o.key] = typeof v === 'string' ? o.fromText(v) : v;
    }
  }
  if (opts.config !== undefined) flags.config = opts.config;
  return flags;
}

function configFrom(cmd: Command): HookdConfig {
  return loadConfig({ flags: flagsOf(cmd.optsWithGlobals()), validate: settingsProblems });
}

/**
 * Builds what the config describes (policy, trusted proxies) entry by entry, so that every bad
 * entry is named at start (and by check-config), not only the first.
 */
export function settingsProblems(cfg: HookdConfig): string[] {
  const problems: string[] = [];
  const lists = { allowCallbackNets: cfg.allowCallbackNets, trustedProxies: cfg.trustedProxies };
  for (const [key, list] of Object.entries(lists)) {
    if (!Array.isArray(list)) continue;
    for (const entry of list) {
      const one = { ...cfg, allowCallbackNets: [], trustedProxies: [], [key]: [entry] };
      try {
        new RuntimeSettings(one);
      } catch (e) {
        problems.push(`${key}: ${(e as Error).message}`);
      }
    }
  }
  // The portal's brand file, read and checked now, so that a bad one is named like any option.
  try {
    loadBrandFile(cfg.portalBrandFile);
  } catch (e) {
    problems.push((e as Error).message);
  }
  // The operator's client certificate and key, read and matched now: a bad file is named at start.
  if (cfg.callbackClientCert !== undefined && cfg.callbackClientKey !== undefined) {
    try {
      loadOperatorTls(cfg.callbackClientCert, cfg.callbackClientKey);
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  // Reads the JWT key file, so that a missing or wrong one fails at start, named.
  try {
    identityProviderFrom(cfg, { trusts: () => false });
  } catch (e) {
    problems.push(...(e instanceof ConfigError ? e.problems : [(e as Error).message]));
  }
  return problems;
}

/** Throws a ConfigError naming every bad entry of the settings (network lists, the JWT key file). */
export function checkConfig(cfg: HookdConfig): HookdConfig {
  const problems = settingsProblems(cfg);
  if (problems.length > 0) throw new ConfigError(problems);
  return cfg;
}

export async function runDaemon(
  cfg: HookdConfig,
  log: Logger,
  reloadConfig?: () => HookdConfig,
): Promise<void> {
  const started = (async () => {
    const hookd = await createHookd(cfg, log, reloadConfig ? { reloadConfig } : {});
    try {
      // On SQLite, `hookd user …` and `hookd token …` find this daemon by the file and use its API;
      // it is written before the start-up line, so that whoever sees the line finds the file.
      await hookd.listen((url) => {
        if (!cfg.databaseUrl) writeAddrFile(cfg.dataDir, cfg.apiBase === '/' ? url : `${url}${cfg.apiBase}`);
      });
    } catch (err) {
      // The store (a database pool, a cluster lease) would otherwise keep the process alive.
      await hookd.close().catch(() => undefined);
      throw err;
    }
    return hookd;
  })();
  // Taken before the start-up line can be seen: a stop asked for as soon as it is (a supervisor, a
  // test) drains the daemon once it is up, rather than meeting the signal's default and dying.
  stopOnSignals({
    log,
    drainMs: cfg.shutdownTimeoutMs,
    close: async () => {
      const hookd = await started.catch(() => undefined);
      if (hookd === undefined) return;
      try {
        await hookd.close();
      } finally {
        if (!cfg.databaseUrl) removeAddrFile(cfg.dataDir);
      }
    },
    exitNow: (code) => process.exit(code),
  });
  const hookd = await started;
  // SIGHUP reloads like `POST /reload`; a refused config is logged there and the old one kept.
  process.on('SIGHUP', () => {
    hookd.reload().catch(() => undefined);
  });
}

export function buildHookdCommand(): Command {
  const program = daemonOptions(new Command('hookd'))
    .description('The hookd webhook daemon: hook API, reverse proxy, matching and callback delivery.')
    .version(packageInfo().version, '-V, --version', 'print the version and exit')
    .showHelpAfterError('(run hookd --help for usage)')
    .action(async (_opts, cmd: Command) => {
      // Node names its main thread MainThread, which is what ps, top and systemd's status show as
      // the command: the daemon is called by its own name there.
      process.title = 'hookd';
      const cfg = configFrom(cmd);
      const log = createLogger(cfg.logLevel, { format: cfg.logFormat });
      // With --workers N, a primary (store, sending, API) and N proxy workers (src/workers/).
      if (isWorkerProcess()) return runWorker(cfg, log.child({ worker: process.pid }), () => configFrom(cmd));
      if ((cfg.workers ?? 1) > 1) await runPrimary(cfg, log, () => configFrom(cmd));
      else await runDaemon(cfg, log, () => configFrom(cmd));
      stopWithParent(log);
    });

  addAdminCommands(program, configFrom);

  program
    .command('check-config <file>')
    .description('validate a config file, reporting every problem, and exit (0 valid, 2 invalid)')
    .action(async (file: string) => {
      loadConfig({ flags: { config: file }, env: {}, validate: settingsProblems });
      console.log(`${file}: valid`);
    });
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  const program = buildHookdCommand().exitOverride();
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      process.exitCode = e.exitCode === 0 ? EXIT.OK : EXIT.CONFIG;
      return;
    }
    if (e instanceof ConfigError) {
      // One line per problem, so that every mistake shows in one run.
      console.error(e.problems.map((p) => `hookd: configuration error: ${p}`).join('\n'));
      process.exitCode = EXIT.CONFIG;
      return;
    }
    if (e instanceof SecretsKeyError) {
      console.error(`hookd: ${e.message}`);
      process.exitCode = EXIT.CONFIG;
      return;
    }
    if (e instanceof DatabaseUnavailableError || e instanceof SchemaTooNewError) {
      console.error(`hookd: ${e.message}`);
      process.exitCode = EXIT.FAILURE;
      return;
    }
    if (e instanceof HookdError) {
      console.error(`hookd: ${e.message}`);
      process.exitCode = e.status === 400 ? EXIT.CONFIG : EXIT.FAILURE;
      return;
    }
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EADDRINUSE' || err.code === 'EACCES') {
      console.error(`hookd: cannot listen: ${err.message}`);
    } else {
      console.error(`hookd: ${err.stack ?? String(e)}`);
    }
    process.exitCode = EXIT.FAILURE;
  }
}
