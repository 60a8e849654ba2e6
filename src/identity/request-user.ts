import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { isValidUserName } from '../auth/index.js';
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
  /** Told of each provider name refused as a user name (metrics). */
  onRefusedName?: () => void,
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
          if (r.kind === 'user') {
            if (isHookdUserName(r.user)) return r.user;
            onRefusedName?.();
            return undefined;
          }
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

/**
 * Whether a provider's name may stand for a hookd user in `$REQUEST_USER` / `Trigger.User`: the
 * API's rule for user names, and never `admin` (no provider speaks for the operator). Anything
 * else (`../x`, markup, a name of 300 characters) makes the request anonymous for hooks, as the
 * API refuses such a caller (docs/DECISIONS.md "Reports, identities and listeners").
 */
export function isHookdUserName(name: string): boolean {
  return name !== 'admin' && isValidUserName(name);
}
