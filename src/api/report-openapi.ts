import { errors, json, type OpenApiFragment } from '../http-api/index.js';

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
    Headers: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: "The request's headers, for Filters and Transforms (request.headers)",
    },
    Body: {
      description:
        'The request body for Filters and Transforms (request.body): a JSON value, or a string (parsed as JSON when Headers says content-type: application/json)',
    },
    ResponseHeaders: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: "AfterCompletion: the response's headers (response.headers)",
    },
    ResponseBody: {
      description: 'AfterCompletion: the response body (response.body), as Body; needs StatusCode',
    },
  },
};
const served = {
  content: {
    'application/json': {
      schema: { $ref: '#/components/schemas/ServedRequest' },
      example: { Method: 'POST', Path: '/repositories/r1/timeseries/t1', StatusCode: 201, User: 'alice' },
    },
  },
};

/** `/_hookd/match` and `/_hookd/report`: requests served without the proxy. */
export const REPORT_OPENAPI: OpenApiFragment = {
  paths: {
    '/_hookd/match': {
      post: {
        summary:
          'Dry run: which of your hooks a request would fire, with the rendered callbacks (nothing is sent)',
        requestBody: served,
        responses: {
          '200': {
            description:
              'The hooks that would fire and their callback requests; AfterCompletion entries carry their status lists, and `NeedsStatus: true` when no StatusCode was given and those lists decide. A hook with a Filter has `Filter: {Matched, Error}` (listed even when it does not match); one with a Transform has `Transform: {Payload, Headers, Skip, Error}`',
            ...json({ type: 'array', items: { $ref: '#/components/schemas/MatchEntry' } }),
          },
          ...errors(400, 401, 403, 503),
        },
      },
    },
    '/_hookd/report': {
      post: {
        summary:
          "Report requests a service served without the proxy. Without the report permission a report is the caller's own: User must be the caller or absent (else 403) and only its own hooks fire; with it (or as admin) any User, and hooks fire as for proxied ones",
        requestBody: {
          content: {
            'application/json': {
              schema: {
                oneOf: [
                  { $ref: '#/components/schemas/ServedRequest' },
                  { type: 'array', maxItems: 1000, items: { $ref: '#/components/schemas/ServedRequest' } },
                ],
              },
              example: [{ Method: 'DELETE', Path: '/repositories/r1', StatusCode: 204, User: 'alice' }],
            },
          },
        },
        parameters: [
          {
            name: 'Idempotency-Key',
            in: 'header',
            schema: { type: 'string', minLength: 1, maxLength: 255 },
            description:
              'Makes a retry safe: a repeat with the same key and body (per user, kept 24 h) gets the first answer again and fires nothing; another body with the key is 422 IDEMPOTENCY_KEY_REUSED; a repeat while the first runs waits, then 409 IDEMPOTENCY_KEY_IN_USE',
          },
          {
            name: 'traceparent',
            in: 'header',
            schema: { type: 'string' },
            description:
              'W3C Trace Context; with tracing on, the report span and the fired hooks continue it',
          },
        ],
        responses: {
          '202': {
            description: 'How many requests were taken and how many callbacks they fired',
            ...json({ $ref: '#/components/schemas/ReportResult' }),
            headers: {
              'Idempotent-Replayed': {
                description:
                  '"true" when this is the stored answer of an earlier request with the same Idempotency-Key',
                schema: { type: 'string', enum: ['true'] },
              },
            },
          },
          ...errors(400, 401, 403, 409, 422, 503),
        },
      },
    },
  },
  schemas: {
    ServedRequest: servedSchema,
    ReportResult: {
      type: 'object',
      required: ['accepted', 'fired'],
      properties: {
        accepted: { type: 'integer', minimum: 0 },
        fired: { type: 'integer', minimum: 0, description: 'Callbacks queued' },
      },
      example: { accepted: 1, fired: 2 },
    },
    MatchEntry: {
      type: 'object',
      required: ['HookId', 'Type', 'Captures', 'Request'],
      example: {
        HookId: 'hk_01JD7W6R0V1X2Y3Z4A5B6C7D8E',
        Type: 1,
        Captures: ['t1'],
        StatusCodeWhiteList: [200, 201],
        Filter: { Matched: true, Error: null },
        Transform: {
          Payload: '{"text":"t1 written"}',
          Headers: { 'X-Chat-Channel': 'alerts' },
          Skip: false,
          Error: null,
        },
        Request: {
          Method: 'POST',
          Url: 'https://receiver.example/timeseries/t1',
          Headers: { 'Content-Type': 'application/json' },
          Body: '{"text":"t1 written"}',
        },
      },
      properties: {
        HookId: { type: 'string' },
        Type: { type: 'integer', enum: [0, 1] },
        Captures: { type: 'array', items: { type: 'string' } },
        StatusCodeWhiteList: { type: 'array', items: { type: 'integer' } },
        StatusCodeBlackList: { type: 'array', items: { type: 'integer' } },
        NeedsStatus: { type: 'boolean', enum: [true] },
        Filter: {
          type: 'object',
          description: "The hook's Filter judged against the request (present when the hook has one)",
          required: ['Matched', 'Error'],
          properties: {
            Matched: { type: 'boolean' },
            Error: { type: ['string', 'null'], description: 'An evaluation error (no match)' },
          },
        },
        Transform: {
          type: 'object',
          description: "The hook's Transform run on the rendered callback (present when the hook has one)",
          required: ['Payload', 'Headers', 'Skip', 'Error'],
          properties: {
            Payload: { type: ['string', 'null'], description: 'The payload it set; null: unchanged' },
            Headers: { type: 'object', additionalProperties: { type: 'string' } },
            Skip: { type: 'boolean' },
            Error: { type: ['string', 'null'] },
          },
        },
        Request: {
          type: 'object',
          required: ['Method', 'Url', 'Headers'],
          properties: {
            Method: { type: 'string' },
            Url: { type: 'string' },
            Headers: { type: 'object', additionalProperties: { type: 'string' } },
            Body: { type: 'string' },
          },
        },
      },
    },
  },
};
