import type { FastifyInstance } from 'fastify';
import { HookdError } from '../errors/catalog.js';
import { type ApiFeature, resource } from '../http-api/index.js';
import { LISTEN_OPENAPI_PATHS } from './openapi-paths.js';

/** A plain GET of the listen endpoint: it only speaks WebSocket (ListenServer takes the upgrade). */
function listenRoute(app: FastifyInstance): void {
  resource(
    app,
    '/_hookd/listen',
    {
      GET: async (_req, reply) => {
        reply.header('Upgrade', 'websocket');
        throw new HookdError(
          'UPGRADE_REQUIRED',
          'the listen endpoint is a WebSocket: connect with Upgrade: websocket (hookctl listen --forward-to URL)',
        );
      },
    },
    { events: true },
  );
}

/** `hookctl listen`'s endpoint; its upgrade is ListenServer's. */
export const LISTEN_FEATURE: ApiFeature = {
  name: 'listen',
  register: listenRoute,
  openApi: { paths: LISTEN_OPENAPI_PATHS },
};
