import type { FastifyInstance } from 'fastify';
import { HookdError } from '../../errors/catalog.js';
import { resource } from '../route-table.js';

/** A plain GET of the tail endpoint: it only speaks WebSocket (the upgrade is handled by TailServer). */
export function tailRoute(app: FastifyInstance): void {
  resource(
    app,
    '/_hookd/tail',
    {
      GET: async (_req, reply) => {
        reply.header('Upgrade', 'websocket');
        throw new HookdError(
          'UPGRADE_REQUIRED',
          'the live tail is a WebSocket endpoint: connect with Upgrade: websocket (hookctl tail)',
        );
      },
    },
    { events: true },
  );
}
