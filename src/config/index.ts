/**
 * The daemon's configuration: its shape (HookdConfig), how it is loaded from flags, `HOOKD_*`
 * variables and the config file, and the option table every one of those is driven by (each
 * option's flag, variable, file key, parser, help and reload class: docs/DECISIONS.md "How to add
 * an option").
 */
export {
  DEFAULT_CLUSTER_LEASE_MS,
  DEFAULT_CONSOLE_LISTEN,
  DEFAULT_IDEMPOTENCY_TTL_MS,
  DEFAULT_LISTEN,
  DEFAULT_OPS_LISTEN,
  type HookdConfig,
  type ListenAddress,
} from './config.js';
export { readTextFile } from './config-file.js';
export {
  ConfigError,
  type ConfigSources,
  defaultDataDir,
  loadConfig,
  parseListen,
  readConfigFile,
  redactDatabaseUrl,
} from './load-config.js';
export { ALL_OPTIONS, IDENTITY_OPTIONS, type NamedOption, OPTION_TABLE, type OptionSpec } from './options.js';
