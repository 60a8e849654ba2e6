import { errors, hookIdParam as idParam, type OpenApiFragment } from '../http-api/index.js';

/** A hook's deliveries, one delivery, redelivery and the signing secret. */
export const DELIVERIES_OPENAPI: OpenApiFragment = {
  paths: {
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
        summary:
          "Queue a hook's deliveries again: all of them, or by status and time range (pending ones keep their schedule)",
        requestBody: {
          required: false,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                additionalProperties: false,
                properties: {
                  status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
                  since: { type: 'string', format: 'date-time' },
                  until: { type: 'string', format: 'date-time' },
                  dryRun: { type: 'boolean', description: 'Count, queue nothing (answers 200)' },
                },
              },
            },
          },
        },
        responses: {
          '200': { description: 'Dry run: {"queued": N, "pending": P, "dryRun": true}' },
          '202': { description: '{"queued": N, "pending": P}' },
          ...errors(400, 401, 404, 409, 503),
        },
      },
    },
    '/hooks/{id}/secret': {
      parameters: [idParam],
      get: {
        summary: "The hook's signing secret (Standard Webhooks)",
        responses: {
          '200': {
            description:
              '{"Secret": "whsec_…", "PublicKey": "whpk_…"}: PublicKey (ed25519, derived from the secret) verifies v1a signatures',
          },
          ...errors(401, 404, 503),
        },
      },
    },
    '/hooks/{id}/secret/rotate': {
      parameters: [idParam],
      post: {
        summary: 'Rotate the signing secret; the old one keeps signing for a grace period',
        responses: {
          '200': { description: '{"Secret": "whsec_…", "PublicKey": "whpk_…", "PreviousValidUntil": "…"}' },
          ...errors(401, 404, 503),
        },
      },
    },
  },
  schemas: {
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
  },
};
