import { HOOK_SCHEMA } from '../hook/index.js';
import { errors, hookIdParam as idParam, type OpenApiFragment, problem } from '../http-api/index.js';

const HOOK_EXAMPLE = {
  Id: 'hk_01JD7W6R0V1X2Y3Z4A5B6C7D8E',
  Name: 'timeseries-changed',
  Owner: 'alice',
  PathPattern: '/repositories/*/timeseries/(*)',
  Methods: ['POST', 'PUT'],
  Type: 1,
  StatusCodeWhiteList: [200, 201],
  Callback: 'https://receiver.example/timeseries/$1',
  CallbackMethod: 'POST',
  Persist: true,
  Modified: '2026-11-22T12:00:00.000+00:00',
  State: 'active',
};
const hookBody = {
  content: {
    'application/json': {
      schema: { $ref: '#/components/schemas/HookInput' },
      example: {
        PathPattern: '/repositories/*/timeseries/(*)',
        Methods: ['POST', 'PUT'],
        Type: 1,
        Callback: 'https://receiver.example/timeseries/$1',
      },
    },
  },
};
const hookOut = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Hook' } } } };
const etagHeader = {
  ETag: {
    description: "The hook's version: its Modified value in quotes; send it back as If-Match",
    schema: { type: 'string' },
  },
};
const hookOutWithWarnings = {
  content: { 'application/json': { schema: { $ref: '#/components/schemas/HookWithWarnings' } } },
};

/** `/hooks`, `/hooks/{id}`, `/hooktypes` and `/_hookd/validate`, with the hook's schemas. */
export function hooksOpenApi(): OpenApiFragment {
  const { $schema: _s, $id: _i, ...input } = HOOK_SCHEMA;
  return {
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
              headers: {
                Link: { description: 'The next page: `<…>; rel="next"`', schema: { type: 'string' } },
              },
              content: {
                'application/json': {
                  schema: { type: 'array', items: { $ref: '#/components/schemas/Hook' } },
                  example: [HOOK_EXAMPLE],
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
                  schema: { type: 'array', items: { $ref: '#/components/schemas/HookType' } },
                },
              },
            },
            ...errors(401, 503),
          },
        },
      },
      '/_hookd/validate': {
        post: {
          summary:
            "Check a hook as create would (callback policy, the owner's path scopes and Name uniqueness included; with the document's Id, as that hook's replace) and lint it; nothing is stored",
          requestBody: hookBody,
          responses: {
            '200': {
              description: 'The hook with its defaults filled in; `Warnings` when the lint found any',
              ...hookOutWithWarnings,
            },
            ...errors(400, 401, 409, 413, 415, 503),
          },
        },
      },
    },
    schemas: {
      HookInput: input,
      HookType: {
        type: 'object',
        required: ['Type', 'Name'],
        properties: {
          Type: { type: 'integer' },
          Name: { type: 'string' },
          Description: { type: 'string' },
        },
        example: { Type: 1, Name: 'AfterCompletion', Description: 'Fires after the service answered' },
      },
      Hook: {
        allOf: [{ $ref: '#/components/schemas/HookInput' }],
        type: 'object',
        required: ['Id', 'Owner', 'Type', 'Modified', 'State'],
        example: HOOK_EXAMPLE,
        properties: {
          Id: { type: 'string' },
          Owner: { type: 'string' },
          Modified: { type: 'string', format: 'date-time' },
          State: {
            type: 'string',
            enum: ['active', 'disabled', 'unverified'],
            description: 'unverified: endpoint verification is on and the callback origin has not agreed yet',
          },
          DisabledReason: { type: 'string', description: 'Why it is disabled; only while disabled' },
          DisabledAt: { type: 'string', format: 'date-time', description: 'Only while disabled' },
          VerificationResult: {
            type: 'object',
            description:
              'With verification on: the callback origin\'s last CloudEvents handshake. Result in a few words ("403 Forbidden", "200 without WebHook-Allowed-Origin", "no answer within 10 s"); NextAt when another is planned',
            properties: {
              At: { type: 'string', format: 'date-time' },
              Result: { type: 'string' },
              NextAt: { type: 'string', format: 'date-time' },
            },
            required: ['At', 'Result'],
          },
          LastFilterError: {
            type: 'object',
            description:
              "The Filter's last evaluation error in this hookd (a missing key, a wrong type): that request did not match. Absent while there has been none",
            properties: {
              At: { type: 'string', format: 'date-time' },
              Error: { type: 'string' },
            },
            required: ['At', 'Error'],
          },
        },
      },
      HookWithWarnings: {
        allOf: [{ $ref: '#/components/schemas/Hook' }],
        type: 'object',
        example: {
          ...HOOK_EXAMPLE,
          Warnings: [
            {
              Field: 'Methods',
              Message: '"FETCH" is not a registered HTTP method, so no ordinary request will fire this hook',
            },
          ],
        },
        properties: {
          Warnings: {
            type: 'array',
            description: "The lint's warnings (docs/API.md); absent when there are none",
            items: {
              type: 'object',
              required: ['Field', 'Message'],
              properties: { Field: { type: 'string' }, Message: { type: 'string' } },
            },
          },
        },
      },
    },
  };
}
