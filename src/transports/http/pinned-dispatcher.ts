/**
 * The connect-time half of the callback target policy (SPEC §10): an undici dispatcher that
 * resolves a callback's host once, judges every address, and connects to the address it judged.
 */
import { isIP } from 'node:net';
import { Agent, buildConnector, errors } from 'undici';
import type { Tunnel } from '../../egress/index.js';
import {
  type AddressChecker,
  type AddressDenial,
  describeDenial,
  type LookupAll,
  REFUSED_NAME_RULE,
  systemLookupAll,
} from '../../policy/index.js';

/** A delivery refused because the callback's host is, or resolves to, an address the policy denies. */
export class CallbackTargetDeniedError extends Error {
  readonly code = 'CALLBACK_TARGET_DENIED';
  /** The denied address (canonical form). */
  readonly address: string;
  /** The host name or literal of the callback URL. */
  readonly hostname: string;
  readonly denial: AddressDenial;
  /** The full reason with the resolved address, for the operator's log only. */
  readonly detail: string;

  constructor(hostname: string, denial: AddressDenial) {
    // The message lands in the delivery log, which the hook's owner reads: for a host name it says
    // the rule, never where the name pointed (that would be a DNS oracle). A literal is the owner's text.
    const literal = isIP(hostname) !== 0;
    super(
      literal
        ? `refused to connect: callback goes to ${describeDenial(denial)}`
        : `not sent: callback host ${hostname} resolves to an address the callback policy refuses: ${REFUSED_NAME_RULE}`,
    );
    this.name = 'CallbackTargetDeniedError';
    this.hostname = hostname;
    this.address = denial.address;
    this.denial = denial;
    this.detail = literal
      ? this.message
      : `refused to connect: callback host ${hostname} resolves to ${describeDenial(denial)}`;
  }
}

/** Options of `createPinnedDispatcher`. */
export interface PinnedDispatcherOptions {
  /** Connections per origin (undici `connections`); unlimited when left out. */
  connections?: number;
  /** Idle keep-alive time of a connection, ms (undici default 4000). */
  keepAliveTimeout?: number;
  /** Limit for name resolution plus TCP/TLS connect, ms (default 10000). */
  connectTimeout?: number;
  /** Resolver returning every address of a name; default the system resolver. */
  lookup?: LookupAll;
  /** Connect through the egress proxy to the checked address. */
  tunnel?: Tunnel;
  /** A client certificate and private CA certificates for TLS connections (mutual TLS). */
  tls?: { cert?: string; key?: string; ca?: string };
}

// Errors after which the next resolved address is worth a try: the address is unreachable from
// here (typically an AAAA record on a host without IPv6), not a problem with the peer's answer.
const TRY_NEXT = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'EAFNOSUPPORT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * An undici Agent whose connections only go to addresses the policy allows. A host name is
 * resolved once per connection, every address is checked (one denied address refuses the
 * connection), and the socket is opened to a checked address, so DNS cannot rebind between the
 * check and the connect. The URL's host stays the `Host` header and the TLS server name (SNI and
 * certificate check). A refusal rejects `request()` with `CallbackTargetDeniedError`.
 * Redirects are never followed: no redirect interceptor is installed, and callers must not add one.
 */
export function createPinnedDispatcher(policy: AddressChecker, opts: PinnedDispatcherOptions = {}): Agent {
  const connectTimeout = opts.connectTimeout ?? 10_000;
  const lookup = opts.lookup ?? systemLookupAll;
  const connector = buildConnector({ timeout: connectTimeout, ...opts.tls });

  const connect: buildConnector.connector = (options, callback) => {
    const hostname = options.hostname;
    resolveChecked(hostname, policy, lookup, connectTimeout).then(
      (addresses) => {
        // SNI must be a name, never an address (RFC 6066 §3); undici would derive the same from
        // `host`, this only makes it independent of the address we put in `hostname`.
        const servername = options.servername || (isIP(hostname) ? undefined : hostname);
        if (opts.tunnel) {
          viaTunnel(opts.tunnel, connector, options, addresses[0]!, servername, connectTimeout, callback);
          return;
        }
        const attempt = (i: number): void => {
          connector({ ...options, hostname: addresses[i]!, servername }, (err, socket) => {
            const code = (err as { code?: unknown } | null)?.code;
            if (err && i + 1 < addresses.length && typeof code === 'string' && TRY_NEXT.has(code)) {
              attempt(i + 1);
              return;
            }
            if (err) callback(err, null);
            else callback(null, socket!);
          });
        };
        attempt(0);
      },
      (err: Error) => callback(err, null),
    );
  };

  return new Agent({
    connect,
    ...(opts.connections === undefined ? {} : { connections: opts.connections }),
    ...(opts.keepAliveTimeout === undefined ? {} : { keepAliveTimeout: opts.keepAliveTimeout }),
  });
}

/**
 * The connection goes through the egress proxy's CONNECT tunnel to the first checked
 * address (the proxy, not hookd, reaches it); TLS to the target, when https, runs inside it.
 */
function viaTunnel(
  tunnel: Tunnel,
  connector: buildConnector.connector,
  options: buildConnector.Options,
  address: string,
  servername: string | undefined,
  timeoutMs: number,
  callback: buildConnector.Callback,
): void {
  const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
  tunnel(address, port, options.host ?? `${options.hostname}:${port}`, timeoutMs).then(
    (socket) => {
      if (options.protocol !== 'https:') callback(null, socket);
      else connector({ ...options, hostname: address, servername, httpSocket: socket }, callback);
    },
    (err: Error) => callback(err, null),
  );
}

/** The addresses to connect to, all allowed; rejects with the first denial. */
async function resolveChecked(
  hostname: string,
  policy: AddressChecker,
  lookup: LookupAll,
  timeoutMs: number,
): Promise<string[]> {
  const addresses = isIP(hostname) ? [hostname] : await lookupWithin(hostname, lookup, timeoutMs);
  if (addresses.length === 0) {
    throw Object.assign(new Error(`callback host ${hostname} has no addresses`), { code: 'ENOTFOUND' });
  }
  for (const address of addresses) {
    const verdict = policy.check(address);
    if (!verdict.allowed) throw new CallbackTargetDeniedError(hostname, verdict);
  }
  return addresses;
}

async function lookupWithin(hostname: string, lookup: LookupAll, timeoutMs: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new errors.ConnectTimeoutError(`resolving ${hostname} took longer than ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([lookup(hostname), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
