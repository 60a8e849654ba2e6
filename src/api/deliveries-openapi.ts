import { errors, hookIdParam as idParam, json, type OpenApiFragment } from '../http-api/index.js';
import { NOTIFICATION_TYPES } from '../wire/index.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const statusParam = { type: 'string', enum: ['pending', 'succeeded', 'failed'] };
const secretOut = json(ref('Secret'));

const DELIVERY_EXAMPLE = {
  Id: 'dl_01JD7W7ZK4Q9M8Y1T2B3C4D5E6',
  HookId: 'hk_01JD7W6R0V1X2Y3Z4A5B6C7D8E',
  Status: 'failed',
  Attempts: 3,
  Created: '2026-11-22T12:00:00.000+00:00',
  NextAttempt: null,
  LastStatusCode: 503,
  LastError: 'HTTP 503',
  Trigger: {
    Kind: 'request',
    Method: 'POST',
    Path: '/repositories/r1/timeseries/t1',
    StatusCode: 201,
    User: 'alice',
  },
  Request: {
    Method: 'POST',
    Url: 'https://receiver.example/cb',
    ContentType: 'application/json',
    Body: '{"series":"t1"}',
  },
};

/** A hook's deliveries, one delivery, redelivery and the signing secret. */
export const DELIVERIES_OPENAPI: OpenApiFragment = {
  paths: {
    '/hooks/{id}/deliveries': {
      parameters: [idParam],
      get: {
        summary: "A hook's deliveries, newest first",
        parameters: [
          { name: 'status', in: 'query', schema: statusParam },
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
          '200': {
            description: 'Deliveries; `Link` rel="next" while more follow',
            headers: {
              Link: { description: 'The next page: `<…>; rel="next"`', schema: { type: 'string' } },
              'Hookd-Receiver-Concurrency': {
                description:
                  "The pace the hook's receiver sets now: `limit=N; max=M; receiver=\"…\"`, and below the maximum why: `; state=ramping` (climbing from its start at a quarter of the maximum) or `; state=lowered; after*=UTF-8''…` (RFC 8187, percent-encoded: what the receiver did: `429 Too Many Requests`, `answers above 2× its 12 ms baseline`, `time-outs`)",
                schema: { type: 'string' },
              },
            },
            content: {
              'application/json': {
                schema: { type: 'array', items: ref('Delivery') },
                example: [DELIVERY_EXAMPLE],
              },
            },
          },
          ...errors(400, 401, 404, 503),
        },
      },
    },
    '/_hookd/deliveries/{id}': {
      parameters: [idParam],
      get: {
        summary: 'One delivery with its AttemptLog',
        responses: {
          '200': { description: 'The delivery', ...json(ref('DeliveryWithAttempts')) },
          ...errors(401, 404, 503),
        },
      },
    },
    '/_hookd/deliveries/{id}/redeliver': {
      parameters: [idParam],
      post: {
        summary: 'Queue a delivery again (same Id)',
        responses: {
          '202': { description: 'Queued: the delivery, pending', ...json(ref('Delivery')) },
          ...errors(401, 404, 409, 503),
        },
      },
    },
    '/hooks/{id}/redeliver': {
      parameters: [idParam],
      post: {
        summary:
          "Queue a hook's deliveries again: all of them, or by status and time range (pending ones keep their schedule)",
        requestBody: { required: false, ...json(ref('BulkRedeliveryFilter')) },
        responses: {
          '200': { description: 'Dry run: what a real run would queue', ...json(ref('BulkRedelivery')) },
          '202': { description: 'Queued', ...json(ref('BulkRedelivery')) },
          ...errors(400, 401, 404, 409, 503),
        },
      },
    },
    '/hooks/{id}/secret': {
      parameters: [idParam],
      get: {
        summary: "The hook's signing secret (Standard Webhooks)",
        responses: {
          '200': { description: 'The secret and its public key', ...secretOut },
          ...errors(401, 404, 503),
        },
      },
    },
    '/hooks/{id}/secret/rotate': {
      parameters: [idParam],
      post: {
        summary: 'Rotate the signing secret; the old one keeps signing for a grace period',
        responses: {
          '200': { description: 'The new secret; PreviousValidUntil ends the grace period', ...secretOut },
          ...errors(401, 404, 503),
        },
      },
    },
  },
  schemas: {
    Trigger: {
      description:
        'What fired a delivery (in deliveries and tail events): a request to the service (`Kind` "request"), or, for a notification endpoint\'s delivery, the event it tells of (`Kind` "notification")',
      oneOf: [ref('RequestTrigger'), ref('NotificationTrigger')],
    },
    RequestTrigger: {
      type: 'object',
      description: 'The request that fired a hook',
      required: ['Kind', 'Method', 'Path', 'StatusCode', 'User'],
      properties: {
        Kind: { type: 'string', enum: ['request'] },
        Method: { type: 'string' },
        Path: { type: 'string' },
        StatusCode: {
          type: ['integer', 'null'],
          description: 'The status served; null: fired before completion',
        },
        User: { type: ['string', 'null'], description: 'Who made the request; null: anonymous' },
      },
    },
    NotificationTrigger: {
      type: 'object',
      description: 'The operational event a notification tells of; no HTTP request fired it',
      required: ['Kind', 'Event'],
      properties: {
        Kind: { type: 'string', enum: ['notification'] },
        Event: { type: 'string', enum: [...NOTIFICATION_TYPES], description: 'e.g. `hook.disabled`' },
      },
    },
    Delivery: {
      type: 'object',
      required: ['Id', 'HookId', 'Status', 'Attempts', 'Created', 'Trigger', 'Request'],
      properties: {
        Id: { type: 'string', description: "dl_…; also the callback's webhook-id" },
        HookId: { type: 'string' },
        Status: statusParam,
        Attempts: { type: 'integer', minimum: 0 },
        Created: { type: 'string', format: 'date-time' },
        NextAttempt: { type: ['string', 'null'], format: 'date-time' },
        LastStatusCode: { type: ['integer', 'null'] },
        LastError: { type: ['string', 'null'] },
        LastReceipt: {
          type: 'string',
          description:
            "A delivered broker callback (no HTTP status): the broker's receipt in words, e.g. `confirmed by 127.0.0.1:5672, exchange ts.events, routing key ts.ts1`",
        },
        Trigger: ref('Trigger'),
        Test: { type: 'boolean', enum: [true], description: "A test event's (the console's)" },
        Request: {
          type: 'object',
          required: ['Method', 'Url'],
          properties: {
            Method: { type: 'string' },
            Url: { type: 'string', description: 'Without a password' },
            ContentType: { type: ['string', 'null'] },
            Body: { type: ['string', 'null'] },
          },
        },
        Durable: {
          type: 'boolean',
          enum: [false],
          description: 'Only while the store refuses its write: held in memory, not yet durable',
        },
        HeldBy: {
          type: 'string',
          description: 'A pending delivery: what holds it back (a limit, an open circuit)',
        },
        HeldBehind: { type: 'string', description: 'The delivery it waits behind (Ordering)' },
      },
      example: DELIVERY_EXAMPLE,
    },
    Attempt: {
      type: 'object',
      required: ['Attempt', 'Time', 'StatusCode', 'LatencyMs', 'Error', 'ResponseBody'],
      properties: {
        Attempt: { type: 'integer', minimum: 0 },
        Time: { type: 'string', format: 'date-time' },
        StatusCode: { type: ['integer', 'null'] },
        LatencyMs: { type: ['number', 'null'] },
        Error: { type: ['string', 'null'] },
        ResponseBody: { type: ['string', 'null'] },
        RateLimitWaitMs: { type: 'number', description: "How long the hook's RateLimit held it back" },
        Via: { type: 'string', enum: ['listener'], description: 'Relayed to hookctl listen' },
        Listener: { type: 'string', description: 'The listener that answered (with Via)' },
      },
    },
    DeliveryWithAttempts: {
      allOf: [ref('Delivery')],
      type: 'object',
      example: {
        ...DELIVERY_EXAMPLE,
        AttemptLog: [
          {
            Attempt: 2,
            Time: '2026-11-22T12:00:31.000+00:00',
            StatusCode: 503,
            LatencyMs: 41,
            Error: 'HTTP 503',
            ResponseBody: 'busy',
          },
        ],
      },
      required: ['AttemptLog'],
      properties: { AttemptLog: { type: 'array', items: ref('Attempt') } },
    },
    BulkRedeliveryFilter: {
      type: 'object',
      additionalProperties: false,
      example: { status: 'failed', since: '2026-11-22T00:00:00Z', dryRun: true },
      properties: {
        status: statusParam,
        since: { type: 'string', format: 'date-time' },
        until: { type: 'string', format: 'date-time' },
        dryRun: { type: 'boolean', description: 'Count, queue nothing (answers 200)' },
      },
    },
    BulkRedelivery: {
      type: 'object',
      required: ['queued', 'pending', 'failed'],
      properties: {
        queued: { type: 'integer', minimum: 0 },
        pending: { type: 'integer', minimum: 0, description: 'Pending ones, left on their schedule' },
        failed: {
          type: 'integer',
          minimum: 0,
          description: "Ones whose hook's Transform failed again: not queued, failed with the new cause",
        },
        dryRun: { type: 'boolean', enum: [true] },
      },
      example: { queued: 12, pending: 2, failed: 0 },
    },
    Secret: {
      type: 'object',
      required: ['Secret', 'PublicKey'],
      properties: {
        Secret: { type: 'string', description: 'whsec_…: verifies v1, github and template signatures' },
        PublicKey: { type: 'string', description: 'whpk_… (ed25519, derived from the secret): verifies v1a' },
        PreviousValidUntil: {
          type: 'string',
          format: 'date-time',
          description: 'After a rotation: until when the old secret signs too',
        },
      },
      example: {
        Secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        PublicKey: 'whpk_Yx6c0bJk2w1N8Zs0s7m0pQ==',
      },
    },
  },
};
