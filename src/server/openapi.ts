import { HOOK_SCHEMA } from '../hook/hook-schema.js';

const problem = {
  description: 'RFC 9457 problem details',
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
};
// 503: events switched off (EVENTS_DISABLED), draining (UNAVAILABLE), or the store refuses
// writes (STORE_UNAVAILABLE: disk full, read-only, database down), with Retry-After.
const unavailable = {
  ...problem,
  description: 'RFC 9457 problem details: EVENTS_DISABLED, UNAVAILABLE (draining) or STORE_UNAVAILABLE',
  headers: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } },
};
const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [String(c), c === 503 ? unavailable : problem]));
const hookBody = { content: { 'application/json': { schema: { $ref: '#/components/schemas/HookInput' } } } };
const hookOut = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Hook' } } } };
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const servedSchema = {
  type: 'object',
  required: ['Method', 'Path'],
  additionalProperties: false,
  properties: {
    Method: { type: 'string' },
    Path: { type: 'string', description: 'Starts with /; a ?query here is split off' },
    Query: { type: 'string' },
    StatusCode: { type: 'integer', minimum: 100, maximum: 599 },
    Phase: { type: 'string', enum: ['before', 'after', 'both'] },
    Uri: {
      type: 'string',
      description: 'Absolute URI for $REQUEST_URI (default: publicBaseUrl or this request’s host)',
    },
    User: {
      type: 'string',
      description: 'Who made the request ($REQUEST_USER, Trigger.User); absent: anonymous',
    },
  },
};
const served = { content: { 'application/json': { schema: servedSchema } } };

/** The OpenAPI 3.1 description of hookd's API, served at `{base}/_hookd/openapi.json`. */
export function buildOpenApi(base: string): Record<string, unknown> {
  const { $schema: _s, $id: _i, ...input } = HOOK_SCHEMA;
  return {
    openapi: '3.1.0',
    info: {
      title: 'hookd',
      version: '1',
      description:
        'Webhook management API of hookd. Metrics (GET /metrics), liveness (GET /healthz) and readiness (GET /readyz) are not part of it: they are served on the operations listener (--ops-listen, default 127.0.0.1:8471), apart from the proxied service.',
    },
    servers: [{ url: base }],
    security: [{ bearer: [] }],
    paths: {
      '/hooks': {
        get: {
          summary: "List the caller's hooks",
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
            {
              name: 'after',
              in: 'query',
              schema: { type: 'string' },
              description: 'Id of the last hook of the previous page',
            },
          ],
          responses: {
            '200': {
              description: 'Hooks ordered by Id; a `Link: <…>; rel="next"` header when more follow',
              content: {
                'application/json': {
                  schema: { type: 'array', items: { $ref: '#/components/schemas/Hook' } },
                },
              },
            },
            ...errors(400, 401, 503),
          },
        },
        post: {
          summary: 'Create a hook',
          requestBody: hookBody,
          responses: {
            '201': { description: 'Created; `Location` names it', ...hookOut },
            ...errors(400, 401, 413, 415, 503),
          },
        },
      },
      '/hooks/{id}': {
        parameters: [idParam],
        get: {
          summary: 'Get a hook',
          responses: { '200': { description: 'The hook', ...hookOut }, ...errors(401, 404, 503) },
        },
        put: {
          summary: 'Replace a hook (fields left out take their defaults)',
          requestBody: hookBody,
          responses: {
            '200': { description: 'The stored hook', ...hookOut },
            ...errors(400, 401, 404, 413, 415, 503),
          },
        },
        delete: {
          summary: 'Delete a hook',
          responses: { '204': { description: 'Deleted' }, ...errors(401, 404, 503) },
        },
      },
      '/hooktypes': {
        get: {
          summary: 'List hook types',
          responses: {
            '200': {
              description: 'The hook types',
              content: {
                'application/json': {
                  schema: {
                    type: 'array',
                    items: {
                      type: 'object',
                      properties: {
                        Type: { type: 'integer' },
                        Name: { type: 'string' },
                        Description: { type: 'string' },
                      },
                    },
                  },
                },
              },
            },
            ...errors(401, 503),
          },
        },
      },
      '/_hookd/match': {
        post: {
          summary:
            'Dry run: which of your hooks a request would fire, with the rendered callbacks (nothing is sent)',
          requestBody: served,
          responses: {
            '200': { description: 'The hooks that would fire and their callback requests' },
            ...errors(400, 401, 503),
          },
        },
      },
      '/_hookd/report': {
        post: {
          summary: 'Report requests a service served without the proxy; hooks fire as for proxied ones',
          requestBody: {
            content: {
              'application/json': {
                schema: { oneOf: [servedSchema, { type: 'array', maxItems: 1000, items: servedSchema }] },
              },
            },
          },
          responses: { '202': { description: '{"accepted": N, "fired": M}' }, ...errors(400, 401, 503) },
        },
      },
      '/hooks/{id}/deliveries': {
        parameters: [idParam],
        get: {
          summary: "A hook's deliveries, newest first",
          parameters: [
            {
              name: 'status',
              in: 'query',
              schema: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
            },
            { name: 'since', in: 'query', schema: { type: 'string', format: 'date-time' } },
            { name: 'until', in: 'query', schema: { type: 'string', format: 'date-time' } },
            {
              name: 'limit',
              in: 'query',
              schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
            },
            { name: 'after', in: 'query', schema: { type: 'string' } },
          ],
          responses: {
            '200': { description: 'Deliveries; `Link` rel="next" while more follow' },
            ...errors(400, 401, 404, 503),
          },
        },
      },
      '/_hookd/deliveries/{id}': {
        parameters: [idParam],
        get: {
          summary: 'One delivery with its AttemptLog',
          responses: { '200': { description: 'The delivery' }, ...errors(401, 404, 503) },
        },
      },
      '/_hookd/deliveries/{id}/redeliver': {
        parameters: [idParam],
        post: {
          summary: 'Queue a delivery again (same Id)',
          responses: { '202': { description: 'Queued' }, ...errors(401, 404, 409, 503) },
        },
      },
      '/hooks/{id}/redeliver': {
        parameters: [idParam],
        post: {
          summary: "Queue a hook's deliveries again, by status (default failed) and time range",
          responses: { '202': { description: '{"queued": N}' }, ...errors(400, 401, 404, 409, 503) },
        },
      },
      '/hooks/{id}/secret': {
        parameters: [idParam],
        get: {
          summary: "The hook's signing secret (Standard Webhooks)",
          responses: { '200': { description: '{"Secret": "whsec_…"}' }, ...errors(401, 404, 503) },
        },
      },
      '/hooks/{id}/secret/rotate': {
        parameters: [idParam],
        post: {
          summary: 'Rotate the signing secret; the old one keeps signing for a grace period',
          responses: {
            '200': { description: '{"Secret": "whsec_…", "PreviousValidUntil": "…"}' },
            ...errors(401, 404, 503),
          },
        },
      },
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
      '/_hookd/reload': {
        post: {
          summary: 'Re-read the configuration (admin only)',
          responses: {
            '200': { description: '{"applied": [...], "restartRequired": [...]}' },
            ...errors(400, 401, 403),
          },
        },
      },
      '/_hookd/openapi.json': {
        get: { summary: 'This document', security: [], responses: { '200': { description: 'OpenAPI 3.1' } } },
      },
    },
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A hookd token (hkd_…), or, with an identity provider configured, a JWT of the service (--identity-jwt-*); the trusted-proxy header and forward-auth credentials are accepted too (docs/API.md "Authentication")',
        },
      },
      schemas: {
        HookInput: input,
        Hook: {
          allOf: [{ $ref: '#/components/schemas/HookInput' }],
          properties: {
            Id: { type: 'string' },
            Owner: { type: 'string' },
            Modified: { type: 'string', format: 'date-time' },
            State: { type: 'string', enum: ['active', 'disabled'] },
          },
        },
        Trigger: {
          type: 'object',
          description: 'The request that fired a delivery (in deliveries and tail events)',
          properties: {
            Method: { type: 'string' },
            Path: { type: 'string' },
            StatusCode: { type: ['integer', 'null'] },
            User: { type: ['string', 'null'], description: 'Who made the request; null: anonymous' },
          },
        },
        Problem: {
          type: 'object',
          properties: {
            type: { type: 'string' },
            title: { type: 'string' },
            status: { type: 'integer' },
            detail: { type: 'string' },
            code: { type: 'string' },
            errors: {
              type: 'array',
              items: {
                type: 'object',
                properties: { field: { type: 'string' }, message: { type: 'string' } },
              },
            },
          },
        },
      },
    },
  };
}
