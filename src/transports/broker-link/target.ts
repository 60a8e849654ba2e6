/**
 * What every broker URL shares: the receiver key, the description without credentials, the
 * place of a template value escaped the same way (percent-encoding of the characters the broker
 * gives a meaning) and the check of its query keys.
 */
import { isIP } from 'node:net';
import { suggest } from '../../util/index.js';

/** A broker connection's identity: one connection per target, shared by every hook that names it. */
export interface BrokerTarget {
  /** Scheme without the colon: `mqtt`, `nats`. */
  readonly scheme: string;
  /** The host as written, IPv6 without brackets. */
  readonly host: string;
  readonly port: number;
  /** URL-decoded; empty when the URL has none. */
  readonly username: string;
  readonly password: string;
  /** The receiver key (never the password). */
  readonly receiverKey: string;
  /** `host:port` for receipts and causes. */
  readonly label: string;
}

/** The host of a URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  const h = url.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/** `host:port`, IPv6 in brackets. */
export function hostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Scheme + host + port + user: two hooks that name the same broker with the same user share a
 * breaker and a connection; a password never becomes part of a key that the core logs or shows.
 */
export function brokerReceiverKey(url: URL, defaultPort: number): string {
  const scheme = url.protocol.slice(0, -1);
  const port = url.port === '' ? defaultPort : Number(url.port);
  const user = url.username === '' ? '' : `${url.username}@`;
  return `${scheme}://${user}${hostPort(hostOf(url), port).toLowerCase()}`;
}

/** The connection target of a rendered URL. */
export function brokerTarget(url: URL, defaultPort: number): BrokerTarget {
  const host = hostOf(url);
  const port = url.port === '' ? defaultPort : Number(url.port);
  return {
    scheme: url.protocol.slice(0, -1),
    host,
    port,
    username: safeDecode(url.username) ?? url.username,
    password: safeDecode(url.password) ?? url.password,
    receiverKey: brokerReceiverKey(url, defaultPort),
    label: hostPort(host, port),
  };
}

/** The URL as logs and pages show it: the user stays, the password goes. */
export function describeBrokerUrl(url: URL): string {
  const copy = new URL(url.href);
  copy.password = '';
  return copy.href;
}

/** `decodeURIComponent`, or undefined for a malformed escape. */
export function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/**
 * Percent-encodes every character `special` matches, and `%` itself so that the encoding can be
 * undone: the value stays one topic level or subject token whatever it holds.
 */
export function percentEscape(value: string, special: RegExp): string {
  return value.replace(special, (c) =>
    [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}

/**
 * A template value with every character `special` matches percent-encoded (so it cannot add a
 * separator or wildcard to a broker name, and a consumer reads it back with
 * `decodeURIComponent`), then URL-encoded for its place in the Callback URL. `%` itself must be
 * in `special`.
 */
export function escapeForBroker(value: string, special: RegExp): string {
  return encodeURIComponent(percentEscape(value, special));
}

/**
 * The query keys of a Callback URL that are not `known`, or a repeated one, as a message naming
 * the key and the closest known key (the caller puts it under the field `Callback`); undefined
 * when they are all known.
 */
export function checkQueryKeys(url: URL, known: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const key of url.searchParams.keys()) {
    if (!known.includes(key)) {
      const near = suggest(key, known);
      return (
        `the ${url.protocol} URL has an unknown query parameter "${key}"` +
        `${near ? `; did you mean "${near}"?` : ''} (known: ${known.join(', ')})`
      );
    }
    if (seen.has(key)) return `the ${url.protocol} URL gives the query parameter "${key}" twice`;
    seen.add(key);
  }
  return undefined;
}
