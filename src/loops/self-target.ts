/**
 * The create-time half of "no loops": a hook whose Callback is hookd's own listen address or its
 * `publicBaseUrl` is refused at once. The proxy would cut such a callback as a loop anyway (it
 * fires nothing there); refusing tells the user now. Other names for hookd (a load balancer, a
 * DNS alias) cannot be known here: the mark on hookd's requests covers those at run time.
 */
import { networkInterfaces } from 'node:os';

export interface OwnAddresses {
  /** The URL hookd listens on (`http://127.0.0.1:8470`); '' before it listens. */
  listening: string;
  publicBaseUrl?: string | undefined;
}

/** Why a Callback URL is hookd itself (a message for the `Callback` field), or undefined. */
export function selfTargetRefusal(url: URL, own: OwnAddresses): string | undefined {
  const rule =
    'a callback into hookd itself would only be cut as a loop; send it to the service behind hookd instead';
  if (own.publicBaseUrl !== undefined && sameOrigin(url, new URL(own.publicBaseUrl))) {
    return `must not point at hookd itself (its publicBaseUrl ${own.publicBaseUrl}): ${rule}`;
  }
  if (own.listening === '') return undefined;
  const listen = new URL(own.listening);
  if (portOf(url) !== portOf(listen)) return undefined;
  const host = bare(url.hostname).toLowerCase();
  const bound = bare(listen.hostname);
  if (host === bound || (isLocal(bound) && localNames(bound).has(host))) {
    return `must not point at hookd itself (its listen address ${own.listening}): ${rule}`;
  }
  return undefined;
}

function sameOrigin(a: URL, b: URL): boolean {
  return (
    a.protocol === b.protocol &&
    bare(a.hostname).toLowerCase() === bare(b.hostname).toLowerCase() &&
    portOf(a) === portOf(b)
  );
}

function portOf(u: URL): number {
  return Number(u.port) || (u.protocol === 'https:' ? 443 : 80);
}

function bare(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function isLocal(bound: string): boolean {
  return bound === '0.0.0.0' || bound === '::' || bound.startsWith('127.') || bound === '::1';
}

/** The names a local client reaches a socket bound to `bound` by. */
function localNames(bound: string): Set<string> {
  const names = new Set(['localhost', '127.0.0.1', '::1']);
  if (bound.startsWith('127.')) names.add(bound);
  if (bound === '0.0.0.0' || bound === '::') {
    // A wildcard listener answers on every address of the machine.
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) if (bound === '::' || a.family === 'IPv4') names.add(a.address);
    }
    if (bound === '0.0.0.0') names.delete('::1');
  }
  return names;
}
