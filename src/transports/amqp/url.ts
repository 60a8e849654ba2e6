/**
 * The shape of an `amqp:` / `amqps:` Callback URL:
 * `amqp://USER:PASS@HOST:PORT/VHOST?exchange=NAME&routing_key=TEMPLATE`. The vhost is one path
 * segment (default `/`, written `%2F`); without `exchange` the default exchange is used and the
 * routing key names a queue.
 */
import { checkQueryKeys, escapeForBroker, hostOf } from '../broker-link/index.js';

export const AMQP_QUERY_KEYS: readonly string[] = Object.freeze(['exchange', 'routing_key']);

/** AMQP 0-9-1 short strings (exchange names, routing keys) hold at most 255 bytes. */
export const SHORTSTR_MAX = 255;

/** What a rendered Callback URL says about where a message goes. */
export interface AmqpTarget {
  readonly tls: boolean;
  readonly host: string;
  readonly port: number;
  readonly username: string;
  readonly password: string;
  /** The vhost, decoded (`/` by default). */
  readonly vhost: string;
  /** The exchange, `''` for the default exchange. */
  readonly exchange: string;
  readonly routingKey: string;
  /** `host:port` as the URL writes it: outcome texts show it. */
  readonly label: string;
}

function defaultPort(url: URL): number {
  return url.protocol === 'amqps:' ? 5671 : 5672;
}

function vhostOf(url: URL): string {
  const raw = url.pathname.replace(/^\//, '');
  return raw === '' ? '/' : decodeURIComponent(raw);
}

export function parseTarget(url: URL): AmqpTarget {
  const port = url.port === '' ? defaultPort(url) : Number(url.port);
  return {
    tls: url.protocol === 'amqps:',
    host: hostOf(url),
    port,
    username: url.username === '' ? 'guest' : decodeURIComponent(url.username),
    password: url.password === '' && url.username === '' ? 'guest' : decodeURIComponent(url.password),
    vhost: vhostOf(url),
    exchange: url.searchParams.get('exchange') ?? '',
    routingKey: url.searchParams.get('routing_key') ?? '',
    label: `${url.hostname}:${port}`,
  };
}

/** Scheme, host, port, user and vhost: never the password. */
export function amqpReceiverKey(url: URL): string {
  const user = url.username === '' ? 'guest' : url.username;
  const port = url.port === '' ? defaultPort(url) : Number(url.port);
  return `${url.protocol}//${user}@${url.hostname.toLowerCase()}:${port}/${encodeURIComponent(vhostOf(url))}`;
}

export function checkAmqp(url: URL): string | undefined {
  if (url.protocol !== 'amqp:' && url.protocol !== 'amqps:') {
    return `must be an amqp: or amqps: URL here, not ${url.protocol}`;
  }
  if (url.hostname === '') return `the ${url.protocol} URL needs a broker host (amqp://HOST:PORT/VHOST?…)`;
  if (url.hash !== '') return `the ${url.protocol} URL takes no #fragment`;
  const path = url.pathname.replace(/^\//, '');
  if (path.includes('/')) {
    return `the ${url.protocol} URL path is the vhost, one segment: write a / inside it as %2F (e.g. amqp://HOST/%2F for the vhost /)`;
  }
  try {
    decodeURIComponent(path);
  } catch {
    return `the ${url.protocol} URL vhost "${path}" is not valid percent-encoding`;
  }
  const keys = checkQueryKeys(url, AMQP_QUERY_KEYS);
  if (keys) return keys;
  const exchange = url.searchParams.get('exchange');
  const routingKey = url.searchParams.get('routing_key');
  if (exchange === '') {
    return `the ${url.protocol} URL has an empty exchange: leave "exchange" out to publish to the default exchange`;
  }
  if (exchange === null && (routingKey === null || routingKey === '')) {
    return `the ${url.protocol} URL needs routing_key (the queue's name) when it publishes to the default exchange (no exchange=)`;
  }
  for (const [name, value] of [
    ['exchange', exchange],
    ['routing_key', routingKey],
  ] as const) {
    if (value !== null && Buffer.byteLength(value) > SHORTSTR_MAX) {
      return `the ${url.protocol} URL ${name} is ${Buffer.byteLength(value)} bytes, over AMQP's limit of ${SHORTSTR_MAX}`;
    }
  }
  return undefined;
}

/**
 * A template value in a routing key (or an exchange name): `.` is the topic exchange's word
 * separator and `*` `#` its binding wildcards, so these, `%`, whitespace and control characters
 * are written as `%XX`; everything else is kept.
 */
export function escapeAmqpValue(value: string): string {
  return escapeForBroker(value, /[.*#%\s\p{Cc}]/gu);
}
