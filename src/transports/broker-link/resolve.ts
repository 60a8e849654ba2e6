import { isIP } from 'node:net';
import { describeDenial, systemLookupAll } from '../../policy/index.js';
import type { TransportContext } from '../transport.js';
import { LinkFailure } from './failure.js';

/** The host of a URL as an address or a name: an IPv6 literal loses its brackets. */
export function hostOf(url: URL): string {
  const h = url.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/**
 * Every address `host` stands for, each one allowed by the callback target policy. A denied
 * address is a `denied` failure naming the rule (and, for a name, never where it points: the
 * policy text of an IP literal is the user's own); a name that does not resolve is `unreachable`.
 */
export async function resolveAllowed(host: string, ctx: TransportContext, label: string): Promise<string[]> {
  if (isIP(host)) {
    const verdict = ctx.policy.check(host);
    if (!verdict.allowed) {
      throw new LinkFailure('denied', `refused to connect: ${label} goes to ${describeDenial(verdict)}`);
    }
    return [host];
  }
  let addresses: string[];
  try {
    addresses = [...new Set(await (ctx.lookup ?? systemLookupAll)(host))];
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'lookup failed';
    throw new LinkFailure('unreachable', `cannot resolve ${host} (${code})`);
  }
  if (addresses.length === 0) throw new LinkFailure('unreachable', `cannot resolve ${host} (no addresses)`);
  for (const address of addresses) {
    const verdict = ctx.policy.check(address);
    if (!verdict.allowed) {
      throw new LinkFailure(
        'denied',
        `refused to connect: ${label} host ${host} resolves to ${describeDenial(verdict)}`,
      );
    }
  }
  return addresses;
}
