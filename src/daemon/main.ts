import { Command, CommanderError, Option } from 'commander';
import type { Logger } from 'pino';
import type { HookdConfig } from '../config/config.js';
import { ConfigError, loadConfig } from '../config/load-config.js';
import { ALL_OPTIONS } from '../config/options.js';
import { HookdError } from '../errors/catalog.js';
import { identityProviderFrom } from '../identity/from-config.js';
import { CidrError } from '../policy/address-policy.js';
import { DatabaseUnavailableError, SchemaTooNewError } from '../store/postgres/pg-common.js';
import { addAdminCommands } from './admin-commands.js';
import { createHookd } from './hookd.js';
import { createLogger } from './logger.js';
import { RuntimeSettings } from './runtime-settings.js';

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
  return checkConfig(loadConfig({ flags: flagsOf(cmd.optsWithGlobals()) }));
}

/** Builds what the config describes (policy, trusted proxies) so a bad entry fails at start, named. */
export function checkConfig(cfg: HookdConfig): HookdConfig {
  try {
    new RuntimeSettings(cfg);
  } catch (e) {
    if (e instanceof CidrError) throw new ConfigError(`allowCallbackNets: ${e.message}`);
    throw new ConfigError(`trustedProxies: ${(e as Error).message}`);
  }
  // Reads the JWT key file, so that a missing or wrong one fails at start, named.
  identityProviderFrom(cfg, { trusts: () => false });
  return cfg;
}

export async function runDaemon(
  cfg: HookdConfig,
  log: Logger,
  reloadConfig?: () => HookdConfig,
): Promise<void> {
  const hookd = await createHookd(cfg, log, reloadConfig ? { reloadConfig } : {});
  try {
    await hookd.listen();
  } catch (err) {
    // The store (a database pool, a cluster lease) would otherwise keep the process alive.
    await hookd.close().catch(() => undefined);
    throw err;
  }
  // SIGHUP reloads like `POST /reload`; a refused config is logged there and the old one kept.
  process.on('SIGHUP', () => {
    hookd.reload().catch(() => undefined);
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(EXIT.FAILURE);
    }
    stopping = true;
    log.info({ signal, drainMs: cfg.shutdownTimeoutMs }, 'stopping: finishing in-flight requests');
    hookd
      .close()
      .then(() => {
        log.info('stopped');
        log.flush();
        process.exitCode = EXIT.OK;
      })
      .catch((err: unknown) => {
        log.error({ err }, 'error while stopping');
        process.exitCode = EXIT.FAILURE;
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

export function buildHookdCommand(): Command {
  const program = daemonOptions(new Command('hookd'))
    .description('The hookd webhook daemon: hook API, reverse proxy, matching and callback delivery.')
    .showHelpAfterError('(run hookd --help for usage)')
    .action(async (_opts, cmd: Command) => {
      const cfg = configFrom(cmd);
      await runDaemon(cfg, createLogger(cfg.logLevel), () => configFrom(cmd));
    });

  addAdminCommands(program, configFrom);

  program
    .command('check-config <file>')
    .description('validate a config file and exit (0 valid, 2 invalid)')
    .action(async (file: string) => {
      checkConfig(loadConfig({ flags: { config: file }, env: {} }));
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
      console.error(`hookd: configuration error: ${e.message}`);
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
