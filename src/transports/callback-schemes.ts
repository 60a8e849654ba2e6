/**
 * Which Callback schemes users may use (`--callback-schemes`), and the create-time check of a
 * Callback URL by its scheme's transport: the scheme allowed here, then the URL's shape. The
 * address policy is the caller's, as for HTTP.
 */
import { suggest } from '../util/index.js';
import type { TransportRegistry } from './registry.js';

/**
 * The schemes allowed when the operator names none: every one hookd has a transport for. A
 * broker that is not reachable from hookd's host costs nothing but a failed delivery, and the
 * address policy already keeps loopback and private brokers out unless allowed.
 */
export const DEFAULT_CALLBACK_SCHEMES: readonly string[] = Object.freeze([
  'http',
  'https',
  'amqp',
  'amqps',
  'mqtt',
  'mqtts',
  'nats',
  'redis',
]);

/** The default list, without the schemes this build has no transport for. */
export function defaultCallbackSchemes(registry: TransportRegistry): string[] {
  return DEFAULT_CALLBACK_SCHEMES.filter((s) => registry.forScheme(s) !== undefined);
}

/** Why a `--callback-schemes` entry is refused, with the closest scheme hookd has; undefined: fine. */
export function schemeProblem(scheme: string, registry: TransportRegistry): string | undefined {
  if (registry.forScheme(scheme) !== undefined) return undefined;
  const near = suggest(scheme, registry.schemes);
  return `"${scheme}" is not a Callback scheme hookd has a transport for${near ? ` (did you mean ${near}?)` : ''}; it has ${registry.schemes.join(', ')}`;
}

/**
 * The create-time check of a Callback URL's scheme and shape: a message naming the rule (and the
 * closest allowed scheme), or undefined when the URL may be used.
 */
export function callbackSchemeCheck(
  registry: TransportRegistry,
  allowed: readonly string[] = registry.schemes,
): (url: URL) => string | undefined {
  const list = allowed.join(', ');
  return (url) => {
    const scheme = url.protocol.slice(0, -1).toLowerCase();
    const m = allowed.includes(scheme) ? registry.forScheme(scheme) : undefined;
    if (m === undefined) {
      const near = suggest(scheme, allowed);
      const hint = near !== undefined && near !== scheme ? ` (did you mean ${near}?)` : '';
      return `scheme "${scheme}" is not allowed${hint}: use one of ${list} (the operator's --callback-schemes)`;
    }
    if (url.hostname === '') return 'must name a host';
    return m.check(url);
  };
}

/**
 * The create-time check of a hook's header names against its Callback's transport: a header that
 * would overwrite a field of the message itself is refused, naming it; undefined when none does.
 */
export function callbackHeaderCheck(
  registry: TransportRegistry,
): (url: URL, names: readonly string[]) => string | undefined {
  return (url, names) => {
    const m = registry.forScheme(url.protocol);
    const reserved = m?.reservedHeaders;
    if (reserved === undefined) return undefined;
    const taken = names.filter((n) => reserved.includes(n.toLowerCase()));
    if (taken.length === 0) return undefined;
    return `a ${url.protocol} Callback uses ${taken.map((n) => `"${n.toLowerCase()}"`).join(', ')} for the message itself, so no header may be named so: rename it`;
  };
}
