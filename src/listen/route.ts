import type { FastifyInstance } from 'fastify';
import { HookdError } from '../errors/catalog.js';
import { resource } from '../server/route-table.js';

/** A plain GET of the listen endpoint: it only speaks WebSocket (ListenServer takes the upgrade). */
export function listenRoute(app: FastifyInstance): void {
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
