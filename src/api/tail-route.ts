import type { FastifyInstance } from 'fastify';
import { HookdError } from '../errors/catalog.js';
import { type ApiFeature, errors, resource } from '../http-api/index.js';

/** A plain GET of the tail endpoint: it only speaks WebSocket (the upgrade is handled by TailServer). */
function tailRoute(app: FastifyInstance): void {
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

/** The live tail's endpoint; its upgrade is TailServer's (src/server/tail.ts). */
export const TAIL_FEATURE: ApiFeature = {
  name: 'tail',
  register: tailRoute,
  openApi: {
    paths: {
      '/_hookd/tail': {
        get: {
          summary:
            'Live tail of your fired callbacks and attempts (WebSocket; Authorization header on the upgrade)',
          parameters: [
            {
              name: 'hook',
              in: 'query',
              schema: { type: 'array', items: { type: 'string' } },
              style: 'form',
              explode: true,
            },
            {
              name: 'status',
              in: 'query',
              schema: { type: 'string', enum: ['2xx', '3xx', '4xx', '5xx', 'failed'] },
            },
          ],
          responses: { '101': { description: 'Switching protocols' }, ...errors(400, 401, 426, 503) },
        },
      },
    },
  },
};
