import type { FastifyInstance } from 'fastify';
import { HookdError } from '../errors/index.js';
import { attachPrincipal, type RouteFlags } from '../http-api/index.js';
import type { ApiIdentity } from '../identity/index.js';
import { identityRequestOf } from '../identity/index.js';

/**
 * Runs before every API route: the events switch first (SPEC §7: with events off the hook API is
 * unavailable, whoever asks), then authentication unless the route is public: a hookd token, or
 * the configured identity provider (ApiIdentity).
 */
export function installAuth(app: FastifyInstance, auth: ApiIdentity, eventsEnabled: () => boolean): void {
  app.addHook('onRequest', async (req) => {
    const flags = (req.routeOptions.config ?? {}) as RouteFlags;
    if (flags.events && !eventsEnabled()) {
      throw new HookdError(
        'EVENTS_DISABLED',
        'events are disabled on this hookd, so the hook API is unavailable and no hook fires; enable them by starting hookd without --no-events (or with HOOKD_EVENTS=true, or "events": {"enabled": true} in the config file)',
      );
    }
    if (flags.public) return;
    attachPrincipal(req, await auth.authenticate(identityRequestOf(req.raw)));
  });
}
