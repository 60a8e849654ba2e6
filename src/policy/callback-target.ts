/**
 * The create/replace-time check of a hook's `Callback` URL against the callback target policy
 * (SPEC §10). The binding check happens again at connect time (`transports/http/pinned-dispatcher.ts`);
 * this one exists so that a user learns at once, with a 400, that a hook could never deliver.
 */
import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { type AddressChecker, describeDenial } from './address-policy.js';

/** Resolves a host name to every address it has (IPv4 and IPv6), in resolver order. */
export type LookupAll = (hostname: string) => Promise<string[]>;

/**
 * `ok` carries the addresses that were checked: empty when the name could not be resolved now.
 * A refusal's `message` names the rule and never what a host name resolved to (any user would
 * otherwise learn where internal names point: a DNS oracle); `detail` says it, for the admin.
 */
export type TargetCheck = { ok: true; addresses: string[] } | { ok: false; message: string; detail: string };

/** What a refused host name is told, whoever asks: the rule, not the address. */
export const REFUSED_NAME_RULE =
  'callbacks may only go to globally routable addresses unless the operator allows the range with --allow-callback-net';

/** The system resolver (`getaddrinfo`, so /etc/hosts counts), every address of both families. */
export const systemLookupAll: LookupAll = async (hostname) => {
  const results = await dns.lookup(hostname, { all: true, verbatim: true });
  return results.map((r) => r.address);
};

const DEFAULT_TIMEOUT_MS = 2000;
const HTTP_SCHEMES: readonly string[] = ['http:', 'https:'];

/** The host of a URL as an address or name: IPv6 literals lose their brackets. */
export function urlHost(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * Create/replace-time check of a Callback URL (SPEC §10). An IP literal host is judged directly;
 * a host name is resolved and every address it resolves to must be allowed.
 *
 * A name that does not resolve, or whose lookup fails or takes longer than `timeoutMs`
 * (default 2000 ms), is accepted with `addresses: []`: hookd may run where public names do not
 * resolve at the moment (no DNS yet, a split-horizon resolver, a flaky network), and refusing
 * then would make hook creation depend on the weather. Nothing is lost by accepting, because
 * every delivery resolves the name again and the connect-time check refuses a denied address.
 */
export async function checkCallbackTarget(
  url: URL,
  policy: AddressChecker,
  opts: {
    lookup?: LookupAll;
    timeoutMs?: number;
    /**
     * The schemes (`amqp:`) whose hosts it judges; another is refused. Default http: and https:.
     * Every scheme's host is judged alike: a broker on loopback is as refused as a web server.
     */
    schemes?: readonly string[];
  } = {},
): Promise<TargetCheck> {
  const schemes = opts.schemes ?? HTTP_SCHEMES;
  if (!schemes.includes(url.protocol)) {
    const message = `Callback must be an ${schemes.join(' or ')} URL, not ${url.protocol}`;
    return { ok: false, message, detail: message };
  }
  if (url.hostname === '') {
    const message = 'Callback must name a host';
    return { ok: false, message, detail: message };
  }
  const host = urlHost(url);
  if (isIP(host)) {
    const verdict = policy.check(host);
    if (verdict.allowed) return { ok: true, addresses: [host] };
    // The address is the client's own text: telling it back reveals nothing.
    const message = `goes to ${describeDenial(verdict)}`;
    return { ok: false, message, detail: message };
  }

  const addresses = await resolveWithin(
    host,
    opts.lookup ?? systemLookupAll,
    opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  );
  if (addresses === undefined) return { ok: true, addresses: [] };
  for (const address of addresses) {
    const verdict = policy.check(address);
    if (!verdict.allowed) {
      return {
        ok: false,
        message: `host ${host} resolves to an address the callback policy refuses: ${REFUSED_NAME_RULE}`,
        detail: `host ${host} resolves to ${describeDenial(verdict)}`,
      };
    }
  }
  return { ok: true, addresses };
}

/** The resolved addresses, or undefined when the name cannot be resolved within the time limit. */
async function resolveWithin(
  host: string,
  lookup: LookupAll,
  timeoutMs: number,
): Promise<string[] | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, undefined);
  });
  try {
    const found = await Promise.race([lookup(host), timedOut]);
    return found === undefined ? undefined : [...new Set(found)];
  } catch {
    // ENOTFOUND, EAI_AGAIN, ENODATA and friends: see the doc comment above for why this is no
    // reason to refuse the hook.
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
