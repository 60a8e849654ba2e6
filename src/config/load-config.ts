import { readFileSync } from 'node:fs';
import { availableParallelism, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_REDACTED_QUERY_PARAMS } from '../privacy/redact-query.js';
import { parseJsonText } from '../util/json-text.js';
import { suggest } from '../util/suggest.js';
import {
  DEFAULT_CLUSTER_LEASE_MS,
  DEFAULT_CONSOLE_LISTEN,
  DEFAULT_IDEMPOTENCY_TTL_MS,
  DEFAULT_LISTEN,
  DEFAULT_OPS_LISTEN,
  type HookdConfig,
  type ListenAddress,
} from './config.js';
import { ALL_OPTIONS } from './options.js';
import { semanticsOptions } from './semantics-options.js';

/**
 * Configuration problems, each naming the key and where it came from (all of them at once, so
 * that one run of `hookd check-config` shows every mistake). hookd exits 2 on it.
 */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problem: string | string[]) {
    const problems = typeof problem === 'string' ? [problem] : problem;
    super(
      problems.length === 1
        ? problems[0]!
        : `${problems.length} problems:\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface ConfigSources {
  /** Parsed flag values by option key (commander's camelCase names mapped to OPTIONS keys). */
  flags?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  configFile?: string;
  /** Further checks of the merged values (CIDR lists); their problems are reported with the others. */
  validate?: (cfg: HookdConfig) => string[];
}

type Raw = Record<string, { value: unknown; from: string }>;

const FILE_KEYS = new Set(ALL_OPTIONS.map((o) => o.fileKey));

/** Flags, then `HOOKD_*` variables, then the config file, then defaults (SPEC §11). */
export function loadConfig(sources: ConfigSources): HookdConfig {
  const env = sources.env ?? process.env;
  const raw: Raw = {};
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

/** Reads and flattens a JSON config file; unknown keys come back as problems, with a suggestion. */
export function readConfigFile(file: string): { values: Record<string, unknown>; unknown: string[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read config file ${file}: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseJsonText(file, text);
  } catch (e) {
    // `FILE:LINE:COLUMN: what`, as hookctl validate reports a hook file.
    throw new ConfigError(`${(e as Error).message} (the config file is not valid JSON)`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError(`config file ${file} must hold a JSON object`);
  }
  const flat: Record<string, unknown> = {};
  const unknown: string[] = [];
  const walk = (o: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(o)) {
      const key = prefix + k;
      if (k === '$schema' || k === '$comment') continue;
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && !FILE_KEYS.has(key)) {
        walk(v as Record<string, unknown>, `${key}.`);
      } else if (!FILE_KEYS.has(key)) {
        const hint = suggest(key, [...FILE_KEYS]);
        unknown.push(`${file}: unknown key "${key}"${hint ? `; did you mean "${hint}"?` : ''}`);
      } else flat[key] = v;
    }
  };
  walk(doc as Record<string, unknown>, '');
  return { values: flat, unknown };
}

/**
 * Checks and merges the values. Each problem is added to `problems` (the caller throws them all
 * at once); a refused value falls back to its default so that the other keys are still checked.
 */
function resolveConfig(raw: Raw, env: NodeJS.ProcessEnv, problems: string[]): HookdConfig {
  const get = (k: string) => raw[k];
  const fail = (k: string, rule: string): never => {
    const r = raw[k];
    problems.push(`${r ? r.from : k}: ${rule}`);
    return undefined as never;
  };
  const str = (k: string): string | undefined => {
    const r = get(k);
    if (r === undefined) return undefined;
    if (typeof r.value !== 'string') return fail(k, 'must be a string');
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
    parseListenOrSocket(listenText) ??
    fail(
      'listen',
      `"${listenText}" is not HOST:PORT (e.g. 127.0.0.1:8470, [::1]:8470, :8470) or unix:/ABSOLUTE/PATH`,
    );
  const socketOptions = socketOptionsOf(listen, str, fail);

  // In the file, `"console": {"listen": false}` switches it off too.
  const consoleText =
    get('console.listen')?.value === false ? 'off' : (str('console.listen') ?? DEFAULT_CONSOLE_LISTEN);
  const consoleListen = OPS_OFF.has(consoleText.trim().toLowerCase())
    ? false
    : (parseListen(consoleText) ??
      fail(
        'console.listen',
        `"${consoleText}" is not HOST:PORT (e.g. 127.0.0.1:8472), or off to disable it`,
      ));
  const consoleOnProxy = get('console.onProxy');
  if (consoleOnProxy !== undefined && typeof consoleOnProxy.value !== 'boolean')
    fail('console.onProxy', 'must be true or false');

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
  if (!/^\/[A-Za-z0-9._~\-/]*$/.test(apiBase) || apiBase.includes('//')) {
    fail('apiBase', 'must be a path such as / or /api');
    apiBase = '/';
  }
  apiBase = apiBase.length > 1 ? apiBase.replace(/\/+$/, '') : '/';

  const events = get('events.enabled');
  if (events !== undefined && typeof events.value !== 'boolean')
    fail('events.enabled', 'must be true or false');

  const consoleOn = get('console.enabled');
  if (consoleOn !== undefined && typeof consoleOn.value !== 'boolean')
    fail('console.enabled', 'must be true or false');

  const logLevel = str('logLevel') ?? 'info';
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (!levels.includes(logLevel)) fail('logLevel', `must be one of ${levels.join(', ')}`);

  const logFormat = str('logFormat') ?? 'auto';
  if (!LOG_FORMATS.includes(logFormat)) fail('logFormat', `must be one of ${LOG_FORMATS.join(', ')}`);

  const databaseUrl = str('databaseUrl');
  if (databaseUrl !== undefined) {
    // The value holds a password: the messages name the source and the rule, never the value.
    const protocol = URL.canParse(databaseUrl) ? new URL(databaseUrl).protocol : undefined;
    if (protocol === undefined)
      fail('databaseUrl', 'must be a URL such as postgres://user:password@host:5432/db');
    else if (protocol !== 'postgres:' && protocol !== 'postgresql:')
      fail('databaseUrl', `must be a postgres:// or postgresql:// URL, not ${protocol}//`);
  }

  const identity = identityOf(raw, str, fail);

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
    redactQueryParams: redactListOf(get('redactQueryParams'), list),
    opsListen,
    logFormat: logFormat as HookdConfig['logFormat'],
    ...deliveryLimits(int),
    ...identity,
    ...autoDisableOf(get('autoDisable.after'), fail),
    ...(get('autoDisable.failures') !== undefined && {
      autoDisableFailures: int('autoDisable.failures', 10, 1, 1_000_000),
    }),
    ...operatorOptions(get, fail),
    consoleEnabled: (consoleOn?.value as boolean | undefined) ?? true,
    workers: workersOf(get('workers'), fail),
    consoleListen,
    consoleOnProxy: (consoleOnProxy?.value as boolean | undefined) ?? false,
    ...socketOptions,
    ...semanticsOptions(get, fail),
  };
}

/** `workers` (issue 23): a whole number from 1 to 256, or `auto` (the cores this process may use). */
function workersOf(r: { value: unknown } | undefined, fail: (k: string, why: string) => never): number {
  if (r === undefined) return 1;
  if (r.value === 'auto') return availableParallelism();
  const n = r.value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 256)
    fail('workers', 'must be a whole number from 1 to 256, or auto');
  return n as number;
}

/** `redactQueryParams`: absent is the default list; `[]`, `""` or `none` turn redaction off. */
function redactListOf(r: { value: unknown } | undefined, list: (k: string) => string[]): string[] {
  if (r === undefined) return [...DEFAULT_REDACTED_QUERY_PARAMS];
  const names = list('redactQueryParams')
    .flatMap((n) => n.split(/[\s,]+/))
    .filter(Boolean);
  return names.length === 1 && names[0]!.toLowerCase() === 'none' ? [] : names;
}

/** The delivery limits that were set (the pipeline has the defaults); absent keys stay absent. */
function deliveryLimits(
  int: (k: string, def: number, min: number, max: number) => number,
): Partial<HookdConfig> {
  const out: Partial<HookdConfig> = {};
  const set = (key: keyof HookdConfig, fileKey: string, min: number, max: number) => {
    const v = int(fileKey, -1, min, max);
    if (v !== -1) (out as Record<string, number>)[key] = v;
  };
  set('deliveryConcurrency', 'delivery.concurrency', 1, 100_000);
  set('deliveryPerHost', 'delivery.perHost', 1, 10_000);
  set('deliveryPerEndpoint', 'delivery.perEndpoint', 1, 10_000);
  set('storeFaultBuffer', 'delivery.faultBuffer', 0, 10_000_000);
  return out;
}

const LOG_FORMATS = ['auto', 'json', 'pretty'];

/** `--listen`: HOST:PORT, or `unix:` and an absolute path (the front proxy's socket). */
function parseListenOrSocket(text: string): ListenAddress | undefined {
  if (!text.startsWith('unix:')) return parseListen(text);
  const path = text.slice('unix:'.length);
  return path.startsWith('/') && path.length > 1 && !path.includes('\0') ? { path } : undefined;
}

/** `--listen-mode` and `--listen-group`: only with a socket (alone they would be silently ignored). */
function socketOptionsOf(
  listen: ListenAddress,
  str: (k: string) => string | undefined,
  fail: (k: string, rule: string) => never,
): Partial<HookdConfig> {
  const modeText = str('listenMode');
  const group = str('listenGroup');
  // An unreadable --listen was reported already (fail records and goes on, to show every problem).
  if (listen === undefined) return {};
  if (!('path' in listen)) {
    if (modeText !== undefined) fail('listenMode', 'needs --listen unix:PATH (it is the socket file mode)');
    if (group !== undefined) fail('listenGroup', "needs --listen unix:PATH (it is the socket file's group)");
    return {};
  }
  const out: Partial<HookdConfig> = {};
  if (modeText !== undefined) {
    if (!/^0?[0-7]{3}$/.test(modeText.trim()))
      fail('listenMode', `"${modeText}" is not an octal file mode such as 0660`);
    out.listenMode = Number.parseInt(modeText.trim(), 8);
  }
  if (group !== undefined) {
    if (!/^[A-Za-z0-9_][A-Za-z0-9._-]{0,31}$/.test(group))
      fail('listenGroup', `"${group}" is not a group name or number`);
    out.listenGroup = group;
  }
  return out;
}

/** `--ops-listen` values that switch the operations listener off. */
const OPS_OFF = new Set(['off', 'none', 'false', '0', '']);

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const DURATION_MS: Record<string, number> = { ms: 1, '': 1000, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * The identity options: at most one provider, and each provider's tuning only with its provider
 * (a lone `--identity-jwt-issuer` would otherwise be silently ignored).
 */
function identityOf(
  raw: Raw,
  str: (k: string) => string | undefined,
  fail: (k: string, rule: string) => never,
): Partial<HookdConfig> {
  const out: Partial<HookdConfig> = {};
  const jwksUrl = str('identity.jwt.jwksUrl');
  const keyFile = str('identity.jwt.keyFile');
  const header = str('identity.header');
  const forwardUrl = str('identity.forward.url');
  const providers = [
    jwksUrl !== undefined && raw['identity.jwt.jwksUrl']!.from,
    keyFile !== undefined && raw['identity.jwt.keyFile']!.from,
    header !== undefined && raw['identity.header']!.from,
    forwardUrl !== undefined && raw['identity.forward.url']!.from,
  ].filter((p): p is string => typeof p === 'string');
  if (providers.length > 1) {
    throw new ConfigError(
      `identity: configure at most one identity provider (a JWKS URL or a JWT key file, an identity header, or a forward-auth URL); found ${providers.join(', ')}`,
    );
  }
  if (jwksUrl !== undefined) {
    if (!isHttpUrl(jwksUrl)) fail('identity.jwt.jwksUrl', 'must be an absolute http:// or https:// URL');
    out.identityJwtJwksUrl = jwksUrl;
  }
  if (keyFile !== undefined) out.identityJwtKeyFile = resolve(keyFile);
  const jwt = jwksUrl !== undefined || keyFile !== undefined;
  for (const [k, field] of [
    ['identity.jwt.issuer', 'identityJwtIssuer'],
    ['identity.jwt.audience', 'identityJwtAudience'],
    ['identity.jwt.userClaim', 'identityJwtUserClaim'],
    ['identity.jwt.scopesClaim', 'identityJwtScopesClaim'],
  ] as const) {
    const v = str(k);
    if (v === undefined) continue;
    if (!jwt) fail(k, 'applies to JWTs only: set --identity-jwt-jwks-url or --identity-jwt-key-file too');
    if (v === '') fail(k, 'must not be empty');
    out[field] = v;
  }
  if (header !== undefined) {
    if (!HEADER_NAME.test(header)) fail('identity.header', 'must be a header name such as X-Forwarded-User');
    out.identityHeader = header;
  }
  if (forwardUrl !== undefined) {
    if (!isHttpUrl(forwardUrl)) fail('identity.forward.url', 'must be an absolute http:// or https:// URL');
    out.identityForwardUrl = forwardUrl;
  }
  const userHeader = str('identity.forward.userHeader');
  const ttl = raw['identity.forward.ttl'];
  const timeout = raw['identity.forward.timeout'];
  for (const [k, present] of [
    ['identity.forward.userHeader', userHeader !== undefined],
    ['identity.forward.ttl', ttl !== undefined],
    ['identity.forward.timeout', timeout !== undefined],
  ] as const) {
    if (present && forwardUrl === undefined)
      fail(k, 'applies to forward auth only: set --identity-forward-url too');
  }
  if (userHeader !== undefined) {
    if (!HEADER_NAME.test(userHeader))
      fail('identity.forward.userHeader', 'must be a header name such as X-User');
    out.identityForwardUserHeader = userHeader;
  }
  const duration = (k: string, max: number, min: number): number | undefined => {
    const r = raw[k];
    if (r === undefined) return undefined;
    const rule = `must be a duration such as 500ms, 5s or 2m (a bare number is seconds), from ${min} ms to ${max / 1000} s`;
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(String(r.value));
    if (!m || (typeof r.value !== 'string' && typeof r.value !== 'number')) return fail(k, rule);
    const ms = Math.round(Number(m[1]) * DURATION_MS[m[2] ?? '']!);
    if (ms < min || ms > max) fail(k, rule);
    return ms;
  };
  const ttlMs = duration('identity.forward.ttl', 3_600_000, 0);
  if (ttlMs !== undefined) out.identityForwardTtlMs = ttlMs;
  const timeoutMs = duration('identity.forward.timeout', 60_000, 1);
  if (timeoutMs !== undefined) out.identityForwardTimeoutMs = timeoutMs;
  const refuse = raw['identity.refuseUnknownUsers'];
  if (refuse !== undefined) {
    if (typeof refuse.value !== 'boolean') fail('identity.refuseUnknownUsers', 'must be true or false');
    if (providers.length === 0)
      fail(
        'identity.refuseUnknownUsers',
        'needs an identity provider (--identity-jwt-*, --identity-header or --identity-forward-url)',
      );
    out.identityRefuseUnknownUsers = refuse.value as boolean;
  }
  return out;
}

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
  if (!Array.isArray(r.value) || r.value.length === 0 || r.value.length > 20) {
    fail('retrySchedule', rule);
    return {};
  }
  let bad: unknown;
  const seconds = (r.value as unknown[]).map((v) => {
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_RETRY_SECONDS) return v;
    const m = typeof v === 'string' ? /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(v.trim()) : null;
    const n = m ? Number(m[1]) * UNIT_SECONDS[m[2]!]! : Number.NaN;
    if (!(n >= 0 && n <= MAX_RETRY_SECONDS)) bad ??= v;
    return n;
  });
  if (bad !== undefined) fail('retrySchedule', `${JSON.stringify(bad)}: ${rule}`);
  return { retrySchedule: seconds };
}

/** `autoDisable.after`: seconds or a duration such as `5d`, `12h`; 0 or `off` turns it off. */
function autoDisableOf(
  r: { value: unknown } | undefined,
  fail: (k: string, rule: string) => never,
): { autoDisableAfterMs?: number } {
  if (r === undefined) return {};
  const rule =
    'must be seconds or a duration like 30s, 15m, 12h, 5d (at most 365d), or 0 / off to turn auto-disable off';
  const v = r.value;
  if (v === 'off' || v === false) return { autoDisableAfterMs: 0 };
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 365 * 86400)
    return { autoDisableAfterMs: v * 1000 };
  const m = typeof v === 'string' ? /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(v.trim()) : null;
  const n = m ? Number(m[1]) * UNIT_SECONDS[m[2]!]! : Number.NaN;
  if (!(n >= 0 && n <= 365 * 86400)) fail('autoDisable.after', `${JSON.stringify(v)}: ${rule}`);
  return { autoDisableAfterMs: n * 1000 };
}

/** Issue 16's options: `idempotency.ttl`, `tracing.enabled`, `tracing.endpoint`. */
function operatorOptions(
  get: (k: string) => { value: unknown } | undefined,
  fail: (k: string, rule: string) => never,
): Pick<HookdConfig, 'idempotencyTtlMs' | 'tracing' | 'tracingEndpoint'> {
  let ttl = DEFAULT_IDEMPOTENCY_TTL_MS;
  const t = get('idempotency.ttl');
  if (t !== undefined) {
    const rule = 'must be seconds or a duration like 30m, 24h, 7d (from 1s to 30d)';
    const m = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(String(t.value).trim());
    const n =
      m && (typeof t.value === 'number' || typeof t.value === 'string')
        ? Number(m[1]) * UNIT_SECONDS[m[2]!]!
        : Number.NaN;
    if (!(n >= 1 && n <= 30 * 86400)) fail('idempotency.ttl', rule);
    ttl = Math.round(n * 1000);
  }
  const on = get('tracing.enabled');
  if (on !== undefined && typeof on.value !== 'boolean')
    fail('tracing.enabled', 'must be true or false (on, off)');
  const endpoint = get('tracing.endpoint');
  if (endpoint !== undefined && (typeof endpoint.value !== 'string' || !isHttpUrl(endpoint.value)))
    fail(
      'tracing.endpoint',
      'must be an absolute http:// or https:// URL such as http://127.0.0.1:4318/v1/traces',
    );
  return {
    idempotencyTtlMs: ttl,
    ...(on !== undefined && { tracing: on.value as boolean }),
    ...(endpoint !== undefined && { tracingEndpoint: endpoint.value as string }),
  };
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
