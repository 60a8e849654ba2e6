/**
 * What every broker URL shares: the receiver key, the description without credentials, the
 * place of a template value escaped the same way (percent-encoding of the characters the broker
 * gives a meaning), and the host resolved and judged by the address policy before any connect.
 */
import { isIP } from 'node:net';
import {
  type AddressChecker,
  describeDenial,
  type LookupAll,
  REFUSED_NAME_RULE,
  systemLookupAll,
} from '../../policy/index.js';

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

/** A host the address policy refuses (for a name: the rule, never where it points). */
export class BrokerDeniedError extends Error {
  override readonly name = 'BrokerDeniedError';
}

/**
 * Resolves the broker's host within `timeoutMs` and judges every address; one denied address
 * refuses the connection, so DNS cannot pick a denied one later. The connect goes to the first
 * address returned, pinned, the way the HTTP transport's dispatcher does.
 */
export async function resolveAllowed(
  host: string,
  policy: AddressChecker,
  lookup: LookupAll | undefined,
  timeoutMs: number,
): Promise<string[]> {
  const literal = isIP(host) !== 0;
  const addresses = literal ? [host] : await lookupWithin(host, lookup ?? systemLookupAll, timeoutMs);
  if (addresses.length === 0) {
    throw Object.assign(new Error(`broker host ${host} has no addresses`), { code: 'ENOTFOUND' });
  }
  for (const address of addresses) {
    const verdict = policy.check(address);
    if (verdict.allowed) continue;
    // The delivery log is read by the hook's owner: a name's address stays unsaid (a DNS oracle).
    throw new BrokerDeniedError(
      literal
        ? `refused to connect: the broker is at ${describeDenial(verdict)}`
        : `not sent: broker host ${host} resolves to an address the callback policy refuses: ${REFUSED_NAME_RULE}`,
    );
  }
  return addresses;
}

async function lookupWithin(host: string, lookup: LookupAll, timeoutMs: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          Object.assign(new Error(`resolving ${host} took longer than ${timeoutMs} ms`), {
            code: 'EAI_AGAIN',
          }),
        ),
      timeoutMs,
    );
  });
  try {
    return [...new Set(await Promise.race([lookup(host), timeout]))];
  } finally {
    clearTimeout(timer);
  }
}
