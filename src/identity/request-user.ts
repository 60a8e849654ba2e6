import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { type IdentityProvider, identityRequestOf } from './provider.js';

/** Resolves the user of one request, at most once, only when called. */
export type RequestUser = () => Promise<string | undefined>;

/** How often an unavailable provider is logged while it stays unavailable. */
const WARN_EVERY_MS = 10_000;

/**
 * The identity of proxied requests, for `$REQUEST_USER` and friends. The resolver made per
 * request does nothing until a hook matched and asks; it then asks the provider once and keeps
 * the answer for both phases of the request. Anything but an identified user (no credentials,
 * refused ones, a provider that is down) is anonymous: the request has already been forwarded,
 * so the only thing at stake is which user the firing is attributed to, and "nobody" is the
 * answer that grants least. An unavailable provider is logged, at most every 10 s.
 */
export function requestUserResolver(
  provider: IdentityProvider,
  log: Logger,
): (req: IncomingMessage) => RequestUser {
  let lastWarn = 0;
  return (req) => {
    // Read now: by the time an AfterCompletion hook asks, the socket may be gone. Nothing else
    // is done until a hook matched: this runs for every request that hooks watch.
    const peer = req.socket?.remoteAddress;
    let answer: Promise<string | undefined> | undefined;
    return () => {
      answer ??= provider.identify(identityRequestOf(req, peer)).then(
        (r) => {
          if (r.kind === 'user') return r.user;
          if (r.kind === 'unavailable' && Date.now() - lastWarn > WARN_EVERY_MS) {
            lastWarn = Date.now();
            log.warn(
              { provider: provider.kind, reason: r.reason },
              'request identity unavailable: counted as anonymous',
            );
          }
          return undefined;
        },
        () => undefined,
      );
      return answer;
    };
  };
}
