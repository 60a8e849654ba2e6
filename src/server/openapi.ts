import { HOOK_SCHEMA } from '../hook/hook-schema.js';

const problem = {
  description: 'RFC 9457 problem details',
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
};
const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [String(c), problem]));
const hookBody = { content: { 'application/json': { schema: { $ref: '#/components/schemas/HookInput' } } } };
const hookOut = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Hook' } } } };
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };

/** The OpenAPI 3.1 description of hookd's API, served at `{base}/openapi.json`. */
export function buildOpenApi(base: string): Record<string, unknown> {
  const { $schema: _s, $id: _i, ...input } = HOOK_SCHEMA;
  return {
    openapi: '3.1.0',
    info: { title: 'hookd', version: '1', description: 'Webhook management API of hookd.' },
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
      '/healthz': {
        get: { summary: 'Liveness', security: [], responses: { '200': { description: 'Alive' } } },
      },
      '/readyz': {
        get: {
          summary: 'Readiness',
          security: [],
          responses: {
            '200': { description: 'Ready' },
            '503': { description: 'Draining or store unreachable' },
          },
        },
      },
      '/openapi.json': {
        get: { summary: 'This document', security: [], responses: { '200': { description: 'OpenAPI 3.1' } } },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
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
