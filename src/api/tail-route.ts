import { type ApiFeature, errors, websocketOnly } from '../http-api/index.js';

/** The live tail's endpoint; its upgrade is TailServer's (src/server/tail.ts). */
export const TAIL_FEATURE: ApiFeature = {
  name: 'tail',
  register: (api) =>
    websocketOnly(
      api,
      '/_hookd/tail',
      'the live tail is a WebSocket endpoint: connect with Upgrade: websocket (hookctl tail)',
    ),
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
