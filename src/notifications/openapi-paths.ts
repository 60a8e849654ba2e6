/** The OpenAPI description of the notification endpoints API and of `POST /hooks/{id}/enable`. */
import { type PathItem, problem } from '../http-api/index.js';

const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [String(c), problem]));
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const types = [
  'hook.disabled',
  'delivery.failed',
  'endpoint.breaker_opened',
  'endpoint.breaker_closed',
  'hook.certificate_expiring',
];

const ENDPOINT_EXAMPLE = {
  Id: 'ne_01JD7WB2C3D4E5F6G7H8J9K0M1',
  Owner: 'alice',
  Url: 'https://ops.example/hookd-notifications',
  Events: ['hook.disabled', 'delivery.failed'],
  Description: 'on-call',
  Created: '2026-11-22T12:00:00.000+00:00',
};

const endpointSchema = {
  type: 'object',
  required: ['Id', 'Owner', 'Url', 'Events', 'Created'],
  example: ENDPOINT_EXAMPLE,
  properties: {
    Id: { type: 'string', description: 'ne_…' },
    Owner: { type: 'string' },
    Url: { type: 'string' },
    Events: { type: 'array', items: { type: 'string', enum: ['*', ...types] } },
    Description: { type: 'string' },
    Created: { type: 'string', format: 'date-time' },
  },
};
const endpointOut = { content: { 'application/json': { schema: endpointSchema } } };

export const NOTIFICATION_OPENAPI_PATHS: Record<string, PathItem> = {
  '/hooks/{id}/enable': {
    parameters: [idParam],
    post: {
      summary: 'Re-enable a disabled hook (410 Gone or auto-disable); its configuration is unchanged',
      responses: {
        '200': {
          description: 'The hook, State active',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Hook' } } },
        },
        ...errors(401, 404, 503),
      },
    },
  },
  '/_hookd/notifications': {
    get: {
      summary: 'Your notification endpoints',
      responses: {
        '200': {
          description: 'Ordered by Id; never the secrets',
          content: { 'application/json': { schema: { type: 'array', items: endpointSchema } } },
        },
        ...errors(401, 503),
      },
    },
    post: {
      summary:
        'Register a notification endpoint; the answer holds its signing secret (Standard Webhooks), shown this once',
      requestBody: {
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['Url'],
              additionalProperties: false,
              example: { Url: 'https://ops.example/hookd-notifications', Events: ['hook.disabled'] },
              properties: {
                Url: { type: 'string', description: 'http:// or https://, under the callback target policy' },
                Events: {
                  type: 'array',
                  minItems: 1,
                  items: { type: 'string', enum: ['*', ...types] },
                  description: 'Default ["*"]: every type',
                },
                Description: { type: 'string', maxLength: 256 },
              },
            },
          },
        },
      },
      responses: {
        '201': {
          description: 'Created; `Location` names it',
          content: {
            'application/json': {
              schema: {
                allOf: [endpointSchema],
                type: 'object',
                required: ['Secret'],
                example: { ...ENDPOINT_EXAMPLE, Secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
                properties: { Secret: { type: 'string', description: 'whsec_…' } },
              },
            },
          },
        },
        ...errors(400, 401, 503),
      },
    },
  },
  '/_hookd/notifications/{id}': {
    parameters: [idParam],
    get: {
      summary: 'One of your notification endpoints',
      responses: { '200': { description: 'The endpoint', ...endpointOut }, ...errors(401, 404, 503) },
    },
    delete: {
      summary: 'Remove a notification endpoint (its pending notifications are dropped)',
      responses: { '204': { description: 'Removed' }, ...errors(401, 404, 503) },
    },
  },
  '/_hookd/notifications/{id}/deliveries': {
    parameters: [idParam],
    get: {
      summary: "The endpoint's last 100 notification deliveries, newest first (same shape as a hook's)",
      responses: {
        '200': {
          description: 'Deliveries',
          content: {
            'application/json': {
              schema: { type: 'array', items: { $ref: '#/components/schemas/Delivery' } },
            },
          },
        },
        ...errors(401, 404, 503),
      },
    },
  },
};
