import { resolve } from 'node:path';
import { DEFAULT_REDACTED_QUERY_PARAMS } from '../../privacy/index.js';
import { defaultDataDir } from '../../util/index.js';
import { asBool, asList, asNumber, asText, type OptionSpec, refuse } from './spec.js';
import {
  durationSeconds,
  httpUrl,
  type ListenAddress,
  oneOf,
  parseListen,
  stringList,
  text,
  trueOrFalse,
  wholeNumber,
} from './values.js';

export const DEFAULT_LISTEN = '127.0.0.1:8470';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const MAX_RETRY_SECONDS = 7 * 86400;
const MAX_AUTO_DISABLE_SECONDS = 365 * 86400;

/** `--listen`: HOST:PORT, or `unix:` and an absolute path (the front proxy's socket). */
function listenAddress(v: unknown): ListenAddress {
  const s = text(v);
  const rule = `"${s}" is not HOST:PORT (e.g. 127.0.0.1:8470, [::1]:8470, :8470) or unix:/ABSOLUTE/PATH`;
  if (!s.startsWith('unix:')) return parseListen(s) ?? refuse(rule);
  const path = s.slice('unix:'.length);
  return path.startsWith('/') && path.length > 1 && !path.includes('\0') ? { path } : refuse(rule);
}

function apiBase(v: unknown): string {
  const s = text(v);
  if (!/^\/[A-Za-z0-9._~\-/]*$/.test(s) || s.includes('//')) refuse('must be a path such as / or /api');
  return s.length > 1 ? s.replace(/\/+$/, '') : '/';
}

/** `retrySchedule`: up to 20 delays, each a number of seconds or a duration such as `5m`. */
function retrySchedule(v: unknown): number[] {
  const rule =
    'must be a list of 1 to 20 delays, each seconds or a duration like 5s, 5m, 2h, 1d (at most 7d)';
  if (!Array.isArray(v) || v.length === 0 || v.length > 20) return refuse(rule);
  let bad: unknown;
  const seconds = (v as unknown[]).map((d) => {
    if (typeof d === 'number' && Number.isFinite(d) && d >= 0 && d <= MAX_RETRY_SECONDS) return d;
    const n = durationSeconds(d);
    if (!(n >= 0 && n <= MAX_RETRY_SECONDS)) bad ??= d;
    return n;
  });
  if (bad !== undefined) refuse(`${JSON.stringify(bad)}: ${rule}`);
  return seconds;
}

/** `redactQueryParams`: `[]`, `""` or `none` turn redaction off. */
function redactList(v: unknown): string[] {
  const names = stringList(v)
    .flatMap((n) => n.split(/[\s,]+/))
    .filter(Boolean);
  return names.length === 1 && names[0]!.toLowerCase() === 'none' ? [] : names;
}

/** `autoDisable.after`: seconds or a duration such as `5d`, `12h`; 0 or `off` turns it off. */
function autoDisableAfter(v: unknown): number {
  const rule =
    'must be seconds or a duration like 30s, 15m, 12h, 5d (at most 365d), or 0 / off to turn auto-disable off';
  if (v === 'off' || v === false) return 0;
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_AUTO_DISABLE_SECONDS) return v * 1000;
  const n = durationSeconds(v);
  if (!(n >= 0 && n <= MAX_AUTO_DISABLE_SECONDS)) refuse(`${JSON.stringify(v)}: ${rule}`);
  return n * 1000;
}

export const CORE_OPTIONS = {
  /** Where the API and proxy listen: an address, or a unix socket (`--listen unix:PATH`). */
  listen: {
    fileKey: 'listen',
    flag: '--listen <host:port>',
    env: 'HOOKD_LISTEN',
    description:
      'address to listen on (default 127.0.0.1:8470), or unix:PATH for a socket whose peers are trusted as the front proxy',
    fromText: asText,
    parse: listenAddress,
    default: DEFAULT_LISTEN,
  },
  /** The service hookd sits in front of; absent: API only, other paths answer 404. */
  upstream: {
    fileKey: 'upstream',
    flag: '--upstream <url>',
    env: 'HOOKD_UPSTREAM',
    description: 'the HTTP service to proxy requests to',
    fromText: asText,
    parse: (v: unknown): string =>
      httpUrl((s) => `"${s}" is not an absolute http:// or https:// URL`)(v).replace(/\/+$/, ''),
  },
  /** State directory: the SQLite store and admin.token live here. */
  dataDir: {
    fileKey: 'dataDir',
    flag: '--data-dir <dir>',
    env: 'HOOKD_DATA_DIR',
    description: 'state directory (default $STATE_DIRECTORY, $XDG_STATE_HOME/hookd, ~/.local/state/hookd)',
    fromText: asText,
    parse: (v: unknown): string => resolve(text(v)),
    default: (env: NodeJS.ProcessEnv) => defaultDataDir(env),
    shownDefault: '$STATE_DIRECTORY',
  },
  /**
   * The key file that seals the stored secrets (src/secrets/): created 0600 on first start; every
   * instance of a cluster reads the same one. Absent: `secrets.key` in the data dir.
   */
  secretsKeyFile: {
    fileKey: 'secretsKeyFile',
    flag: '--secrets-key-file <file>',
    env: 'HOOKD_SECRETS_KEY_FILE',
    description:
      'the key file that encrypts the stored signing secrets (default secrets.key in the data dir, created 0600 on first start)',
    fromText: asText,
    parse: (v: unknown): string => resolve(text(v)),
  },
  /** Prefix of the management API, `/` or e.g. `/api` (no trailing slash). */
  apiBase: {
    fileKey: 'apiBase',
    flag: '--api-base <path>',
    env: 'HOOKD_API_BASE',
    description: 'path prefix of the management API (default /)',
    fromText: asText,
    parse: apiBase,
    default: '/',
  },
  /** The events switch: when off the API answers 503 and no hook fires; the proxy keeps proxying. */
  eventsEnabled: {
    reload: 'hot',
    fileKey: 'events.enabled',
    flag: '--no-events',
    env: 'HOOKD_EVENTS',
    description: 'disable events: the API answers 503 and no hook fires',
    fromText: asBool,
    parse: trueOrFalse(),
    default: true,
  },
  /** CIDRs that callbacks may reach beyond the globally routable internet. */
  allowCallbackNets: {
    reload: 'hot',
    fileKey: 'allowCallbackNets',
    flag: '--allow-callback-net <cidr>',
    env: 'HOOKD_ALLOW_CALLBACK_NET',
    description: 'let callbacks reach this network (repeatable)',
    fromText: asList,
    repeatable: true,
    parse: stringList,
    default: [],
  },
  /** Absolute base URL used for $REQUEST_URI instead of the request's own scheme and host. */
  publicBaseUrl: {
    reload: 'hot',
    fileKey: 'publicBaseUrl',
    flag: '--public-base-url <url>',
    env: 'HOOKD_PUBLIC_BASE_URL',
    description: 'scheme and host used for $REQUEST_URI',
    fromText: asText,
    parse: (v: unknown): string => httpUrl()(v).replace(/\/+$/, ''),
  },
  /** Addresses (or CIDRs) whose X-Forwarded-Proto/-Host are believed for $REQUEST_URI. */
  trustedProxies: {
    reload: 'hot',
    fileKey: 'trustedProxies',
    flag: '--trusted-proxy <cidr>',
    env: 'HOOKD_TRUSTED_PROXIES',
    description: 'peer whose X-Forwarded-* headers are trusted (repeatable)',
    fromText: asList,
    repeatable: true,
    parse: stringList,
    default: [],
  },
  /** Largest API request body in bytes (413 above it). */
  bodyLimit: {
    fileKey: 'bodyLimit',
    flag: '--body-limit <bytes>',
    env: 'HOOKD_BODY_LIMIT',
    description: 'largest API request body (default 1048576)',
    fromText: asNumber,
    parse: wholeNumber(1024, 64 * 1048576),
    default: 1048576,
  },
  logLevel: {
    reload: 'hot',
    fileKey: 'logLevel',
    flag: '--log-level <level>',
    env: 'HOOKD_LOG_LEVEL',
    description: 'fatal, error, warn, info (default), debug, trace or silent',
    fromText: asText,
    parse: oneOf(LOG_LEVELS),
    default: 'info',
  },
  /** How long SIGTERM waits for in-flight requests and attempts before exiting. */
  shutdownTimeoutMs: {
    reload: 'hot',
    fileKey: 'shutdownTimeoutMs',
    flag: '--shutdown-timeout <ms>',
    env: 'HOOKD_SHUTDOWN_TIMEOUT_MS',
    description: 'drain deadline on SIGTERM (default 10000)',
    fromText: asNumber,
    parse: wholeNumber(0, 3600000),
    default: 10000,
  },
  /** Upstream response deadline: 504 after it. */
  upstreamTimeoutMs: {
    fileKey: 'upstreamTimeoutMs',
    flag: '--upstream-timeout <ms>',
    env: 'HOOKD_UPSTREAM_TIMEOUT_MS',
    description: 'upstream response deadline, 504 after it (default 60000)',
    fromText: asNumber,
    parse: wholeNumber(1, 3600000),
    default: 60000,
  },
  /** Delivery retry schedule in seconds (entry 0 before the first attempt); absent: Standard Webhooks. */
  retrySchedule: {
    fileKey: 'retrySchedule',
    flag: '--retry-schedule <delays>',
    env: 'HOOKD_RETRY_SCHEDULE',
    description:
      'delays before each delivery attempt, e.g. 0,5s,5m,30m,2h (default: Standard Webhooks, 0,5s,5m,30m,2h,5h,10h,14h,20h,24h)',
    fromText: asList,
    parse: retrySchedule,
    shownDefault: '0,5s,5m,30m,2h,5h,10h,14h,20h,24h',
  },
  // Privacy: what hook owners may see of other users' requests.
  /**
   * Query parameters whose values are replaced by `REDACTED` in `$REQUEST_URI` (and so in stored
   * deliveries and the tail); empty: nothing is redacted. Names compare case-insensitively.
   */
  redactQueryParams: {
    reload: 'hot',
    fileKey: 'redactQueryParams',
    flag: '--redact-query-params <names>',
    env: 'HOOKD_REDACT_QUERY_PARAMS',
    description:
      'query parameters whose values become REDACTED in $REQUEST_URI, deliveries and the tail (default access_token,api_key,apikey,token,password,secret,sig,signature,key; "" or none: off)',
    fromText: asList,
    parse: redactList,
    default: DEFAULT_REDACTED_QUERY_PARAMS,
  },
  // Auto-disable: hooks that keep failing are switched off, and their owners told.
  /**
   * Auto-disable: a hook whose every attempt failed for at least this long, ms, and at least
   * `autoDisableFailures` times is disabled; 0 turns auto-disable off (default 5 days).
   */
  autoDisableAfterMs: {
    fileKey: 'autoDisable.after',
    flag: '--auto-disable-after <duration>',
    env: 'HOOKD_AUTO_DISABLE_AFTER',
    description:
      'disable a hook whose every attempt failed for this long (and --auto-disable-failures times), e.g. 5d, 12h; 0 turns it off (default 5d)',
    fromText: asText,
    parse: autoDisableAfter,
    shownDefault: '5d',
  },
  /** Auto-disable: failed attempts in a row needed as well (default 10). */
  autoDisableFailures: {
    fileKey: 'autoDisable.failures',
    flag: '--auto-disable-failures <n>',
    env: 'HOOKD_AUTO_DISABLE_FAILURES',
    description: 'failed attempts in a row needed as well before a hook is auto-disabled (default 10)',
    fromText: asNumber,
    parse: wholeNumber(1, 1_000_000),
    shownDefault: '10',
  },
  /** The web console (default on; `--no-console` turns it off). */
  consoleEnabled: {
    fileKey: 'console.enabled',
    flag: '--no-console',
    env: 'HOOKD_CONSOLE',
    description: 'turn off the web console (served under /_hookd/console/ by default)',
    fromText: asBool,
    parse: trueOrFalse(),
    default: true,
  },
} as const satisfies Record<string, OptionSpec>;

export { defaultDataDir };
