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
const idParam = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'A hook Id, or its Name (looked up as an Id first)',
  schema: { type: 'string' },
};
const etagHeader = {
  ETag: {
    description: "The hook's version: its Modified value in quotes; send it back as If-Match",
    schema: { type: 'string' },
  },
};
const hookOutWithWarnings = {
  content: { 'application/json': { schema: { $ref: '#/components/schemas/HookWithWarnings' } } },
};
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
export function buildOpenApi(
  base: string,
  featurePaths: Record<string, unknown> = {},
): Record<string, unknown> {
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
            '201': {
              description: 'Created; `Location` names it; `Warnings` when the lint found any',
              headers: etagHeader,
              ...hookOutWithWarnings,
            },
            ...errors(400, 401, 409, 413, 415, 503),
          },
        },
      },
      '/hooks/{id}': {
        parameters: [idParam],
        get: {
          summary: 'Get a hook',
          responses: {
            '200': { description: 'The hook', headers: etagHeader, ...hookOut },
            ...errors(401, 404, 503),
          },
        },
        put: {
          summary: 'Replace a hook (fields left out take their defaults)',
          parameters: [
            {
              name: 'If-Match',
              in: 'header',
              required: false,
              schema: { type: 'string' },
              description: 'Replace only if the hook is still at this version (its ETag); else 412',
            },
          ],
          requestBody: hookBody,
          responses: {
            '200': {
              description: 'The stored hook; `Warnings` when the lint found any',
              headers: etagHeader,
              ...hookOutWithWarnings,
            },
            '412': {
              ...problem,
              description: 'PRECONDITION_FAILED: If-Match is not the current ETag (sent in `ETag`)',
            },
            ...errors(400, 401, 404, 409, 413, 415, 503),
          },
        },
        delete: {
          summary: 'Delete a hook',
          parameters: [
            {
              name: 'If-Match',
              in: 'header',
              required: false,
              schema: { type: 'string' },
              description: 'Delete only if the hook is still at this version (its ETag); else 412',
            },
          ],
          responses: { '204': { description: 'Deleted' }, '412': problem, ...errors(401, 404, 503) },
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
            '200': {
              description:
                'The hooks that would fire and their callback requests; AfterCompletion entries carry their status lists, and `NeedsStatus: true` when no StatusCode was given and those lists decide',
            },
            ...errors(400, 401, 403, 503),
          },
        },
      },
      '/_hookd/validate': {
        post: {
          summary:
            'Check a hook as create/replace would (callback policy included) and lint it; nothing is stored',
          requestBody: hookBody,
          responses: {
            '200': {
              description: 'The hook with its defaults filled in; `Warnings` when the lint found any',
              ...hookOutWithWarnings,
            },
            ...errors(400, 401, 413, 415, 503),
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
                schema: { oneOf: [servedSchema, { type: 'array', maxItems: 1000, items: servedSchema }] },
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
              description: '{"accepted": N, "fired": M}',
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
      ...userPaths(),
      ...featurePaths,
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
            State: {
              type: 'string',
              enum: ['active', 'disabled', 'unverified'],
              description:
                'unverified: verification is on and the callback origin has not agreed yet (issue 24)',
            },
            DisabledReason: { type: 'string', description: 'Why it is disabled; only while disabled' },
            DisabledAt: { type: 'string', format: 'date-time', description: 'Only while disabled' },
          },
        },
        User: {
          type: 'object',
          required: ['Name', 'Scopes'],
          properties: {
            Name: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9._-]{0,63}$' },
            Scopes: {
              type: 'array',
              maxItems: 64,
              items: { type: 'string' },
              description:
                'What the user\'s hooks may observe: path patterns (PathPattern syntax, prefix semantics, `$` anchors) meaning "requests under this path", or "own": "requests made by this user". Default ["own"]; admin ["/"]',
            },
            Permissions: {
              type: 'array',
              items: { type: 'string', enum: ['report'] },
              description:
                'What the admin granted beyond owning hooks. "report": the user\'s tokens may report requests made by anyone (POST /_hookd/report with any User; every matching hook fires). Default []; admin always ["report"]. Left out of a PUT: kept',
            },
            Created: { type: 'string', format: 'date-time', readOnly: true },
          },
        },
        Token: {
          type: 'object',
          properties: {
            Id: { type: 'string' },
            User: { type: 'string' },
            Label: { type: 'string' },
            Created: { type: 'string', format: 'date-time' },
            Token: { type: 'string', description: 'The token itself: in the answer to its creation only' },
          },
        },
        HookWithWarnings: {
          allOf: [{ $ref: '#/components/schemas/Hook' }],
          properties: {
            Warnings: {
              type: 'array',
              description: "The lint's warnings (docs/API.md); absent when there are none",
              items: {
                type: 'object',
                properties: { Field: { type: 'string' }, Message: { type: 'string' } },
              },
            },
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

/** `/_hookd/users…`: users and tokens, admin only (a user may read their own record). */
function userPaths(): Record<string, unknown> {
  const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
  const user = json({ $ref: '#/components/schemas/User' });
  const token = json({ $ref: '#/components/schemas/Token' });
  const name = { name: 'name', in: 'path', required: true, schema: { type: 'string' } };
  return {
    '/_hookd/users': {
      get: {
        summary: 'List users with their scopes (admin only)',
        responses: {
          '200': {
            description: 'Users by name',
            ...json({ type: 'array', items: { $ref: '#/components/schemas/User' } }),
          },
          ...errors(401, 403),
        },
      },
      post: {
        summary: 'Add a user (admin only); Scopes default to ["own"]',
        requestBody: { required: true, ...user },
        responses: { '201': { description: 'Added', ...user }, ...errors(400, 401, 403, 409) },
      },
    },
    '/_hookd/users/{name}': {
      parameters: [name],
      get: {
        summary: 'A user and its scopes (admin, or the user itself)',
        responses: { '200': { description: 'The user', ...user }, ...errors(401, 403, 404) },
      },
      put: {
        summary: "Replace the user's scopes (admin only)",
        requestBody: { required: true, ...user },
        responses: { '200': { description: 'The user', ...user }, ...errors(400, 401, 403, 404) },
      },
      delete: {
        summary: 'Remove the user with its tokens and hooks (admin only; not admin itself)',
        responses: { '204': { description: 'Removed' }, ...errors(401, 403, 404, 409) },
      },
    },
    '/_hookd/users/{name}/tokens': {
      parameters: [name],
      get: {
        summary: "The user's tokens: Ids and labels, never values or hashes (admin only)",
        responses: {
          '200': {
            description: 'Tokens',
            ...json({ type: 'array', items: { $ref: '#/components/schemas/Token' } }),
          },
          ...errors(401, 403, 404),
        },
      },
      post: {
        summary: 'Create a token (admin only); its value is in this answer only',
        requestBody: {
          required: false,
          ...json({ type: 'object', properties: { Label: { type: 'string' } } }),
        },
        responses: { '201': { description: 'Created, with Token', ...token }, ...errors(400, 401, 403, 404) },
      },
    },
    '/_hookd/users/{name}/tokens/{id}': {
      parameters: [name, idParam],
      delete: {
        summary: 'Revoke a token (admin only)',
        responses: { '204': { description: 'Revoked' }, ...errors(401, 403, 404) },
      },
    },
  };
}
