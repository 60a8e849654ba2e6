import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { suggest } from '../util/suggest.js';
import { DEFAULT_CLUSTER_LEASE_MS, DEFAULT_LISTEN, DEFAULT_OPS_LISTEN, type HookdConfig } from './config.js';
import { ALL_OPTIONS } from './options.js';

/** A configuration problem, naming the key and where it came from. hookd exits 2 on it. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export interface ConfigSources {
  /** Parsed flag values by option key (commander's camelCase names mapped to OPTIONS keys). */
  flags?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  configFile?: string;
}

type Raw = Record<string, { value: unknown; from: string }>;

const FILE_KEYS = new Set(ALL_OPTIONS.map((o) => o.fileKey));

/** Flags, then `HOOKD_*` variables, then the config file, then defaults (SPEC §11). */
export function loadConfig(sources: ConfigSources): HookdConfig {
  const env = sources.env ?? process.env;
  const raw: Raw = {};
  const configFile = (sources.flags?.config as string | undefined) ?? env.HOOKD_CONFIG ?? sources.configFile;
  if (configFile) {
    for (const [k, v] of Object.entries(readConfigFile(configFile)))
      raw[k] = { value: v, from: `${configFile}: ${k}` };
  }
  const urlFile = env.HOOKD_DATABASE_URL_FILE;
  if (urlFile !== undefined && urlFile !== '') {
    if (env.HOOKD_DATABASE_URL !== undefined && env.HOOKD_DATABASE_URL !== '')
      throw new ConfigError('set HOOKD_DATABASE_URL or HOOKD_DATABASE_URL_FILE, not both');
    raw.databaseUrl = { value: readSecretFile(urlFile), from: 'HOOKD_DATABASE_URL_FILE' };
  }
  for (const o of ALL_OPTIONS) {
    const text = env[o.env];
    if (text !== undefined && text !== '') raw[o.fileKey] = { value: o.fromText(text), from: o.env };
  }
  for (const o of ALL_OPTIONS) {
    const v = sources.flags?.[o.key];
    if (v !== undefined) raw[o.fileKey] = { value: v, from: o.flag.split(' ')[0]! };
  }
  const cfg = resolveConfig(raw, env);
  if (configFile) cfg.configFile = resolve(configFile);
  return cfg;
}

/**
 * The content of a credential file (systemd `LoadCredential=`, a Docker or Kubernetes secret),
 * without the final newline. The error names the file, never its content.
 */
function readSecretFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(
      `HOOKD_DATABASE_URL_FILE: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  const value = text.trim();
  if (value === '') throw new ConfigError(`HOOKD_DATABASE_URL_FILE: ${file} is empty`);
  return value;
}

/**
 * A database URL fit for logs and error messages: the password (and any `password=` parameter)
 * replaced by `***`. Something that is not a URL at all is not shown.
 */
export function redactDatabaseUrl(url: string): string {
  if (!URL.canParse(url)) return '(not a URL)';
  const u = new URL(url);
  if (u.password !== '') u.password = '***';
  for (const key of [...u.searchParams.keys()]) {
    if (/pass|secret|key/i.test(key)) u.searchParams.set(key, '***');
  }
  return u.toString();
}

/** Reads and flattens a JSON config file, rejecting unknown keys with a suggestion. */
export function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read config file ${file}: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`config file ${file} is not valid JSON: ${(e as Error).message}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError(`config file ${file} must hold a JSON object`);
  }
  const flat: Record<string, unknown> = {};
  const walk = (o: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(o)) {
      const key = prefix + k;
      if (k === '$schema' || k === '$comment') continue;
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && !FILE_KEYS.has(key)) {
        walk(v as Record<string, unknown>, `${key}.`);
      } else if (!FILE_KEYS.has(key)) {
        const hint = suggest(key, [...FILE_KEYS]);
        throw new ConfigError(`${file}: unknown key "${key}"${hint ? `; did you mean "${hint}"?` : ''}`);
      } else flat[key] = v;
    }
  };
  walk(doc as Record<string, unknown>, '');
  return flat;
}

function resolveConfig(raw: Raw, env: NodeJS.ProcessEnv): HookdConfig {
  const get = (k: string) => raw[k];
  const fail = (k: string, rule: string): never => {
    const r = raw[k];
    throw new ConfigError(`${r ? r.from : k}: ${rule}`);
  };
  const str = (k: string): string | undefined => {
    const r = get(k);
    if (r === undefined) return undefined;
    if (typeof r.value !== 'string') fail(k, 'must be a string');
    return r.value as string;
  };
  const int = (k: string, def: number, min: number, max: number): number => {
    const r = get(k);
    if (r === undefined) return def;
    const n = r.value;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max)
      fail(k, `must be a whole number from ${min} to ${max}`);
    return n as number;
  };
  const list = (k: string): string[] => {
    const r = get(k);
    if (r === undefined) return [];
    const v = typeof r.value === 'string' ? [r.value] : r.value;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) fail(k, 'must be a list of strings');
    return v as string[];
  };

  const listenText = str('listen') ?? DEFAULT_LISTEN;
  const listen =
    parseListen(listenText) ??
    fail('listen', `"${listenText}" is not HOST:PORT (e.g. 127.0.0.1:8470, [::1]:8470, :8470)`);

  // In the file, `"opsListen": false` switches it off too.
  const opsText = get('opsListen')?.value === false ? 'off' : (str('opsListen') ?? DEFAULT_OPS_LISTEN);
  const opsListen = OPS_OFF.has(opsText.trim().toLowerCase())
    ? false
    : (parseListen(opsText) ??
      fail('opsListen', `"${opsText}" is not HOST:PORT (e.g. 127.0.0.1:8471), or off to disable it`));

  const upstream = str('upstream');
  if (upstream !== undefined && !isHttpUrl(upstream))
    fail('upstream', `"${upstream}" is not an absolute http:// or https:// URL`);
  const publicBaseUrl = str('publicBaseUrl');
  if (publicBaseUrl !== undefined && !isHttpUrl(publicBaseUrl))
    fail('publicBaseUrl', 'must be an absolute http:// or https:// URL');

  let apiBase = str('apiBase') ?? '/';
  if (!/^\/[A-Za-z0-9._~\-/]*$/.test(apiBase) || apiBase.includes('//'))
    fail('apiBase', 'must be a path such as / or /api');
  apiBase = apiBase.length > 1 ? apiBase.replace(/\/+$/, '') : '/';

  const events = get('events.enabled');
  if (events !== undefined && typeof events.value !== 'boolean')
    fail('events.enabled', 'must be true or false');

  const logLevel = str('logLevel') ?? 'info';
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (!levels.includes(logLevel)) fail('logLevel', `must be one of ${levels.join(', ')}`);

  const logFormat = str('logFormat') ?? 'auto';
  if (!LOG_FORMATS.includes(logFormat)) fail('logFormat', `must be one of ${LOG_FORMATS.join(', ')}`);

  const databaseUrl = str('databaseUrl');
  if (databaseUrl !== undefined) {
    // The value holds a password: the messages name the source and the rule, never the value.
    if (!URL.canParse(databaseUrl))
      fail('databaseUrl', 'must be a URL such as postgres://user:password@host:5432/db');
    const protocol = new URL(databaseUrl).protocol;
    if (protocol !== 'postgres:' && protocol !== 'postgresql:')
      fail('databaseUrl', `must be a postgres:// or postgresql:// URL, not ${protocol}//`);
  }

  return {
    listen,
    ...(upstream !== undefined && { upstream: upstream.replace(/\/+$/, '') }),
    dataDir: resolve(str('dataDir') ?? defaultDataDir(env)),
    apiBase,
    eventsEnabled: (events?.value as boolean | undefined) ?? true,
    allowCallbackNets: list('allowCallbackNets'),
    ...(publicBaseUrl !== undefined && { publicBaseUrl: publicBaseUrl.replace(/\/+$/, '') }),
    trustedProxies: list('trustedProxies'),
    bodyLimit: int('bodyLimit', 1048576, 1024, 64 * 1048576),
    logLevel: logLevel as HookdConfig['logLevel'],
    shutdownTimeoutMs: int('shutdownTimeoutMs', 10000, 0, 3600000),
    upstreamTimeoutMs: int('upstreamTimeoutMs', 60000, 1, 3600000),
    ...retryScheduleOf(get('retrySchedule'), fail),
    ...(databaseUrl !== undefined && { databaseUrl }),
    clusterLeaseMs: int('cluster.leaseMs', DEFAULT_CLUSTER_LEASE_MS, 1000, 600000),
    opsListen,
    logFormat: logFormat as HookdConfig['logFormat'],
  };
}

const LOG_FORMATS = ['auto', 'json', 'pretty'];

/** `--ops-listen` values that switch the operations listener off. */
const OPS_OFF = new Set(['off', 'none', 'false', '0', '']);

const UNIT_SECONDS: Record<string, number> = { '': 1, s: 1, m: 60, h: 3600, d: 86400 };
const MAX_RETRY_SECONDS = 7 * 86400;

/** `retrySchedule`: up to 20 delays, each a number of seconds or a duration such as `5m`. */
function retryScheduleOf(
  r: { value: unknown } | undefined,
  fail: (k: string, rule: string) => never,
): { retrySchedule?: number[] } {
  if (r === undefined) return {};
  const rule =
    'must be a list of 1 to 20 delays, each seconds or a duration like 5s, 5m, 2h, 1d (at most 7d)';
  if (!Array.isArray(r.value) || r.value.length === 0 || r.value.length > 20) fail('retrySchedule', rule);
  const seconds = (r.value as unknown[]).map((v) => {
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_RETRY_SECONDS) return v;
    const m = typeof v === 'string' ? /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(v.trim()) : null;
    const n = m ? Number(m[1]) * UNIT_SECONDS[m[2]!]! : Number.NaN;
    if (!(n >= 0 && n <= MAX_RETRY_SECONDS)) fail('retrySchedule', `${JSON.stringify(v)}: ${rule}`);
    return n;
  });
  return { retrySchedule: seconds };
}

/** `$STATE_DIRECTORY` (systemd), else `$XDG_STATE_HOME/hookd`, else `~/.local/state/hookd`. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  // systemd may pass several colon-separated directories; the first is ours.
  if (env.STATE_DIRECTORY) return env.STATE_DIRECTORY.split(':')[0]!;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'hookd');
  return join(homedir(), '.local', 'state', 'hookd');
}

export function parseListen(text: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  const host = m[1] ?? (m[2] || '0.0.0.0');
  return { host, port };
}

function isHttpUrl(s: string): boolean {
  if (!URL.canParse(s)) return false;
  const u = new URL(s);
  return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
}
