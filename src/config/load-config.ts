import { resolve } from 'node:path';
import type { HookdConfig } from './config.js';
import { ConfigError } from './config-error.js';
import { readConfigFile, readSecretFile } from './config-file.js';
import { ALL_OPTIONS } from './options.js';
import { type RawValues, resolveConfig } from './resolve-config.js';

export { ConfigError } from './config-error.js';
export { readConfigFile } from './config-file.js';
export { redactDatabaseUrl } from './options/cluster.js';
export { defaultDataDir } from './options/core.js';
export { parseListen } from './options/values.js';

export interface ConfigSources {
  /** Parsed flag values by option key (commander's camelCase names mapped to OPTIONS keys). */
  flags?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  configFile?: string;
  /** Further checks of the merged values (CIDR lists); their problems are reported with the others. */
  validate?: (cfg: HookdConfig) => string[];
}

/** Flags, then `HOOKD_*` variables, then the config file, then defaults (SPEC §11). */
export function loadConfig(sources: ConfigSources): HookdConfig {
  const env = sources.env ?? process.env;
  const raw: RawValues = {};
  const problems: string[] = [];
  const configFile = (sources.flags?.config as string | undefined) ?? env.HOOKD_CONFIG ?? sources.configFile;
  if (configFile) {
    const read = readConfigFile(configFile);
    problems.push(...read.unknown);
    for (const [k, v] of Object.entries(read.values)) raw[k] = { value: v, from: `${configFile}: ${k}` };
  }
  const urlFile = env.HOOKD_DATABASE_URL_FILE;
  if (urlFile !== undefined && urlFile !== '') {
    if (env.HOOKD_DATABASE_URL !== undefined && env.HOOKD_DATABASE_URL !== '')
      throw new ConfigError('set HOOKD_DATABASE_URL or HOOKD_DATABASE_URL_FILE, not both');
    raw.databaseUrl = {
      value: readSecretFile('HOOKD_DATABASE_URL_FILE', urlFile),
      from: 'HOOKD_DATABASE_URL_FILE',
    };
  }
  for (const o of ALL_OPTIONS) {
    const text = env[o.env];
    if (text !== undefined && text !== '') raw[o.fileKey] = { value: o.fromText(text), from: o.env };
  }
  for (const o of ALL_OPTIONS) {
    const v = sources.flags?.[o.key];
    if (v !== undefined) raw[o.fileKey] = { value: v, from: o.flag.split(' ')[0]! };
  }
  const cfg = resolveConfig(raw, env, problems);
  if (problems.length === 0 && sources.validate) problems.push(...sources.validate(cfg));
  else if (sources.validate) {
    // Keys already refused are not checked twice; the others are, so every problem shows at once.
    const named = (k: string) => problems.some((p) => p.includes(k));
    problems.push(...sources.validate(cfg).filter((p) => !named(p.split(':')[0]!)));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  if (configFile) cfg.configFile = resolve(configFile);
  return cfg;
}
