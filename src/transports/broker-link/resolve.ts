import { isIP } from 'node:net';
import { describeDenial, REFUSED_NAME_RULE, systemLookupAll } from '../../policy/index.js';
import type { TransportContext } from '../transport.js';
import { LinkFailure } from './failure.js';

/** What a denial says about a host name: the rule only, or also the address it resolves to. */

/**
 * Every address `host` stands for, each one allowed by the callback target policy, resolved
 * within the connect time limit; one denied address refuses the connection, so DNS cannot pick a
 * denied one later. A denied address is a `denied` failure naming the rule; a name that does not
 * resolve is `unreachable`. A denial of a name never says where it points (the delivery log is
 * read by the hook's owner: a DNS oracle otherwise); the policy text of an IP literal is the
 * user's own.
 */
export async function resolveAllowed(host: string, ctx: TransportContext, label: string): Promise<string[]> {
  if (isIP(host)) {
    const verdict = ctx.policy.check(host);
    if (!verdict.allowed) {
      throw new LinkFailure('denied', `refused to connect: ${label} goes to ${describeDenial(verdict)}`);
    }
    return [host];
  }
  const addresses = await lookupWithin(host, ctx);
  for (const address of addresses) {
    const verdict = ctx.policy.check(address);
    if (verdict.allowed) continue;
    throw new LinkFailure(
      'denied',
      `not sent: broker host ${host} resolves to an address the callback policy refuses: ${REFUSED_NAME_RULE}`,
    );
  }
  return addresses;
}

async function lookupWithin(host: string, ctx: TransportContext): Promise<string[]> {
  const lookup = ctx.lookup ?? systemLookupAll;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error('timed out'), { code: 'EAI_AGAIN' })),
      ctx.connectTimeoutMs,
    );
  });
  let addresses: string[];
  try {
    addresses = [...new Set(await Promise.race([lookup(host), late]))];
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'lookup failed';
    throw new LinkFailure('unreachable', `cannot resolve ${host} (${code})`);
  } finally {
    clearTimeout(timer);
  }
  if (addresses.length === 0) throw new LinkFailure('unreachable', `cannot resolve ${host} (no addresses)`);
  return addresses;
}
