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
          responses: {
            '101': {
              description: 'Switching protocols; then one text frame per TailEvent, a ping every 15 s',
            },
            ...errors(400, 401, 426, 503),
          },
        },
      },
    },
    schemas: {
      TailEvent: {
        description: 'A frame of the live tail',
        oneOf: [
          { $ref: '#/components/schemas/FiredEvent' },
          { $ref: '#/components/schemas/AttemptEvent' },
          { $ref: '#/components/schemas/DroppedEvent' },
        ],
        discriminator: {
          propertyName: 'kind',
          mapping: {
            fired: '#/components/schemas/FiredEvent',
            attempt: '#/components/schemas/AttemptEvent',
            dropped: '#/components/schemas/DroppedEvent',
          },
        },
      },
      FiredEvent: {
        type: 'object',
        description: 'A hook fired: its delivery is queued',
        required: ['kind', 'Time', 'HookId', 'DeliveryId', 'Trigger'],
        properties: {
          kind: { type: 'string', enum: ['fired'] },
          Time: { type: 'string', format: 'date-time' },
          HookId: { type: 'string' },
          DeliveryId: { type: 'string' },
          Trigger: { $ref: '#/components/schemas/Trigger' },
          Test: { type: 'boolean', enum: [true] },
        },
      },
      AttemptEvent: {
        type: 'object',
        description: 'An attempt of a delivery and its outcome',
        required: [
          'kind',
          'Time',
          'HookId',
          'DeliveryId',
          'Attempt',
          'Method',
          'Url',
          'StatusCode',
          'LatencyMs',
          'Outcome',
          'Error',
          'Trigger',
        ],
        properties: {
          kind: { type: 'string', enum: ['attempt'] },
          Time: { type: 'string', format: 'date-time' },
          HookId: { type: 'string' },
          DeliveryId: { type: 'string' },
          Attempt: { type: 'integer' },
          Method: { type: 'string' },
          Url: { type: 'string' },
          StatusCode: { type: ['integer', 'null'] },
          LatencyMs: { type: 'number' },
          Outcome: { type: 'string', enum: ['succeeded', 'retrying', 'failed'] },
          Error: { type: ['string', 'null'] },
          Receipt: { type: 'string', description: "A broker transport's receipt in words" },
          Trigger: { $ref: '#/components/schemas/Trigger' },
          Test: { type: 'boolean', enum: [true] },
        },
      },
      DroppedEvent: {
        type: 'object',
        description: 'The connection fell behind: this many events were left out',
        required: ['kind', 'Count'],
        properties: { kind: { type: 'string', enum: ['dropped'] }, Count: { type: 'integer' } },
      },
    },
  },
};
