/**
 * The shape of a `redis:` Callback URL: `redis://USER:PASS@HOST:PORT/DB?stream=KEY&maxlen=N`.
 * The database is the path (default 0); `stream` is the stream key, a template; `maxlen` trims
 * the stream to about N entries (`MAXLEN ~ N`) on every add.
 */
import { checkQueryKeys, escapeForBroker, hostOf } from '../broker-link/index.js';

export const REDIS_QUERY_KEYS: readonly string[] = Object.freeze(['stream', 'maxlen']);

/** The stream field that holds the payload: a hook header of this name would collide with it. */
export const RESERVED_FIELD = 'body';

const DEFAULT_PORT = 6379;

export interface RedisTarget {
  readonly host: string;
  readonly port: number;
  /** The ACL user, `default` when the URL names none. */
  readonly username: string;
  readonly password: string | undefined;
  readonly database: number;
  readonly stream: string;
  /** Trim to about this many entries; undefined: no trimming. */
  readonly maxlen: number | undefined;
  /** `host:port` as the URL writes it: outcome texts show it. */
  readonly label: string;
}

function portOf(url: URL): number {
  return url.port === '' ? DEFAULT_PORT : Number(url.port);
}

function databaseOf(url: URL): number {
  const raw = url.pathname.replace(/^\//, '');
  return raw === '' ? 0 : Number(raw);
}

export function parseTarget(url: URL): RedisTarget {
  const maxlen = url.searchParams.get('maxlen');
  return {
    host: hostOf(url),
    port: portOf(url),
    username: url.username === '' ? 'default' : decodeURIComponent(url.username),
    password: url.password === '' ? undefined : decodeURIComponent(url.password),
    database: databaseOf(url),
    stream: url.searchParams.get('stream') ?? '',
    maxlen: maxlen === null ? undefined : Number(maxlen),
    label: `${url.hostname}:${portOf(url)}`,
  };
}

/** Scheme, user, host and port: never the password. */
export function redisReceiverKey(url: URL): string {
  const user = url.username === '' ? 'default' : url.username;
  return `${url.protocol}//${user}@${url.hostname.toLowerCase()}:${portOf(url)}`;
}

export function checkRedis(url: URL): string | undefined {
  if (url.protocol !== 'redis:') return `must be a redis: URL here, not ${url.protocol}`;
  if (url.hostname === '') return 'the redis: URL needs a server host (redis://HOST:PORT/DB?stream=KEY)';
  if (url.hash !== '') return 'the redis: URL takes no #fragment';
  const db = url.pathname.replace(/^\//, '');
  if (db !== '' && !/^(0|[1-9]\d{0,4})$/.test(db)) {
    return `the redis: URL path is the database number (e.g. /0), not "/${db}"`;
  }
  const keys = checkQueryKeys(url, REDIS_QUERY_KEYS);
  if (keys) return keys;
  const stream = url.searchParams.get('stream');
  if (stream === null || stream === '') {
    return 'the redis: URL needs stream=KEY, the stream to add to (e.g. redis://HOST:6379/0?stream=ts:$1)';
  }
  const maxlen = url.searchParams.get('maxlen');
  if (maxlen !== null && !(/^[1-9]\d*$/.test(maxlen) && Number.isSafeInteger(Number(maxlen)))) {
    return `the redis: URL maxlen must be a positive whole number (e.g. maxlen=10000), not "${maxlen}"`;
  }
  return undefined;
}

/**
 * A template value in a stream key: `:` is the key namespace separator by convention (ACL key
 * patterns such as `~ts:*` rely on it) and `* ? [ ] \` are glob characters in ACL patterns,
 * `SCAN MATCH` and `KEYS`; these, `%`, whitespace and control characters are written as `%XX`.
 */
export function escapeRedisValue(value: string): string {
  return escapeForBroker(value, /[:*?[\]\\%\s\p{Cc}]/gu);
}
