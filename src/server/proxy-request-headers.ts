/**
 * The headers of a proxied request as they go to the upstream: hop-by-hop ones and those the
 * Connection header lists dropped, header hygiene applied (src/edge/), X-Forwarded-* set, the
 * trace continued. Flat name/value lists throughout, built in one pass over `rawHeaders`.
 */
import type { IncomingMessage } from 'node:http';
import { HOP_BY_HOP as CONNECTION_SCOPED, type HeaderHygiene } from '../edge/index.js';

// The connection-scoped headers (src/edge/), plus two a request must not carry on: credentials
// meant for this proxy, and `expect` (Node answers 100-continue itself; undici refuses to send it).
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  ...CONNECTION_SCOPED,
  'proxy-authorization',
  'expect',
]);

const FORWARDED = new Set(['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']);

/** What the forwarding rules need to know of a request's headers. */
interface SeenHeaders {
  connection: string | undefined;
  host: string;
  xff: string | undefined;
  proto: string | undefined;
  xfh: string | undefined;
}

/**
 * The request's headers as forwarded: hop-by-hop ones and those its Connection header lists
 * dropped, X-Forwarded-* set. One pass over `rawHeaders`: reading `req.headers` would make Node
 * build the header object, which nothing else on the proxied path needs (it shows in the profile of the proxied path).
 */
export function forwardHeaders(
  req: IncomingMessage,
  hygiene: HeaderHygiene,
  trusted: boolean,
): { headers: string[]; hasBody: boolean } {
  const raw = req.rawHeaders;
  const out: string[] = [];
  const seen: SeenHeaders = {
    connection: undefined,
    host: '',
    xff: undefined,
    proto: undefined,
    xfh: undefined,
  };
  let hasBody = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    // Header hygiene (src/edge/): the identity header in every spelling, Forwarded, X-Real-IP.
    if (hygiene.drops(name, trusted)) continue;
    if (HOP_BY_HOP.has(name)) {
      if (name === 'connection') seen.connection = seen.connection ? `${seen.connection}, ${value}` : value;
      else if (name === 'transfer-encoding') hasBody = true;
      continue;
    }
    if (FORWARDED.has(name)) {
      rememberForwarded(seen, name, value);
      continue;
    }
    if (name === 'content-length') hasBody ||= value !== '0';
    else if (name === 'host' && seen.host === '') seen.host = value;
    out.push(raw[i]!, value);
  }
  const listed = seen.connection;
  const headers = listed && listed !== 'keep-alive' && listed !== 'close' ? withoutListed(out, listed) : out;
  pushForwarded(req, seen, headers, trusted);
  return { headers, hasBody };
}

/**
 * An Upgrade request's headers as forwarded: the same hygiene and X-Forwarded-* treatment, with
 * Connection and Upgrade kept (the upgrade gate needs them).
 */
export function upgradeHeaders(req: IncomingMessage, hygiene: HeaderHygiene, trusted: boolean): string[] {
  const headers: string[] = [];
  const seen: SeenHeaders = {
    connection: undefined,
    host: req.headers.host ?? '',
    xff: undefined,
    proto: undefined,
    xfh: undefined,
  };
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (FORWARDED.has(name)) rememberForwarded(seen, name, raw[i + 1]!);
    else if (!hygiene.drops(name, trusted)) headers.push(raw[i]!, raw[i + 1]!);
  }
  pushForwarded(req, seen, headers, trusted);
  return headers;
}

/** Appends X-Forwarded-For/-Proto/-Host as name, value pairs. */
function pushForwarded(req: IncomingMessage, seen: SeenHeaders, out: string[], trusted: boolean): void {
  const peer = req.socket.remoteAddress ?? '';
  const proto = 'encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http';
  out.push(
    'x-forwarded-for',
    trusted && seen.xff ? `${seen.xff}, ${peer}` : peer,
    'x-forwarded-proto',
    (trusted && seen.proto) || proto,
    'x-forwarded-host',
    (trusted && seen.xfh) || seen.host,
  );
}

/** Keeps an incoming X-Forwarded-* value (used only when the peer is trusted); repeats join as Node does. */
function rememberForwarded(seen: SeenHeaders, name: string, value: string): void {
  if (name === 'x-forwarded-for') seen.xff = seen.xff ? `${seen.xff}, ${value}` : value;
  else if (name === 'x-forwarded-proto') seen.proto ??= value;
  else if (name === 'x-forwarded-host') seen.xfh ??= value;
}

/** The name/value list without the headers a Connection header lists (RFC 9110 §7.6.1). */
export function withoutListed(list: string[], connection: string): string[] {
  const listed = new Set(connection.toLowerCase().split(/\s*,\s*/));
  const kept: string[] = [];
  for (let i = 0; i < list.length; i += 2) {
    if (!listed.has(list[i]!.toLowerCase())) kept.push(list[i]!, list[i + 1]!);
  }
  return kept;
}

/** The upstream continues the proxy span's trace: its `traceparent` replaces the client's. */
export function setTraceParent(list: string[], value: string): void {
  for (let i = 0; i < list.length; i += 2) {
    if (list[i]!.length === 11 && list[i]!.toLowerCase() === 'traceparent') {
      list[i + 1] = value;
      return;
    }
  }
  list.push('traceparent', value);
}
