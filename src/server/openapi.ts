import { type ApiFeature, type PathItem, resource } from '../http-api/index.js';

const OPENAPI_PATH = '/_hookd/openapi.json';

/**
 * The server's own feature: the document of every feature it serves, itself included, built
 * once at start from what they register. It is public (no token needed to read it).
 */
export function openApiFeature(base: string, features: readonly ApiFeature[]): ApiFeature {
  const self: ApiFeature = {
    name: 'openapi',
    register(api) {
      const doc = assembleOpenApi(base, [self, ...features]);
      resource(api, OPENAPI_PATH, { GET: async (_req, reply) => reply.send(doc) }, { public: true });
    },
    openApi: {
      paths: {
        [OPENAPI_PATH]: {
          get: {
            summary: 'This document',
            security: [],
            responses: {
              '200': {
                description: 'OpenAPI 3.1',
                content: { 'application/json': { schema: { type: 'object' } } },
              },
            },
          },
        },
      },
    },
  };
  return self;
}

const problemSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string', description: 'urn:hookd:problem:<code in kebab case>' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', description: 'The stable error code (docs/API.md "Errors")' },
    errors: {
      type: 'array',
      description: 'One entry per invalid field',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: {
          field: { type: 'string' },
          message: { type: 'string' },
          line: { type: 'integer', description: "a syntax error's line in the body, from 1" },
          column: { type: 'integer', description: "a syntax error's column in the body, from 1" },
        },
      },
    },
  },
  example: {
    type: 'urn:hookd:problem:validation-failed',
    title: 'Invalid hook',
    status: 400,
    detail: 'the hook has 1 error(s)',
    code: 'VALIDATION_FAILED',
    errors: [{ field: 'Callback', message: 'must be an absolute http: or https: URL' }],
  },
};

/**
 * The OpenAPI 3.1 description of hookd's API, served at `{base}/_hookd/openapi.json`: the frame
 * (security, the problem shape) with the paths and schemas of every registered feature. Two
 * features describing one path or one schema is a mistake of ours, refused at start.
 */
export function assembleOpenApi(base: string, features: readonly ApiFeature[]): Record<string, unknown> {
  const paths: Record<string, PathItem> = {};
  const schemas: Record<string, unknown> = { Problem: problemSchema };
  for (const f of features) {
    for (const [path, item] of Object.entries(f.openApi?.paths ?? {})) {
      if (paths[path]) throw new Error(`OpenAPI path ${path} of ${f.name} is described twice`);
      paths[path] = withOperationIds(path, item);
    }
    for (const [name, schema] of Object.entries(f.openApi?.schemas ?? {})) {
      if (schemas[name]) throw new Error(`OpenAPI schema ${name} of ${f.name} is described twice`);
      schemas[name] = schema;
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'hookd',
      version: '1',
      license: { name: 'MIT', identifier: 'MIT' },
      description:
        'Webhook management API of hookd. Metrics (GET /metrics), liveness (GET /healthz) and readiness (GET /readyz) are not part of it: they are served on the operations listener (--ops-listen, default 127.0.0.1:8471), apart from the proxied service.',
    },
    servers: [{ url: base }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A hookd token (hkd_…), or, with an identity provider configured, a JWT of the service (--identity-jwt-*); the trusted-proxy header and forward-auth credentials are accepted too (docs/API.md "Authentication")',
        },
      },
      schemas,
    },
  };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * Each operation named (`operationId`) from its method and path, `post /hooks/{id}/enable` →
 * `postHooksIdEnable`, unless its feature named it: generators and linters key operations by it,
 * and one rule for every feature keeps the names unique.
 */
function withOperationIds(path: string, item: PathItem): PathItem {
  const words = path
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '')
    .map((w) => w[0]!.toUpperCase() + w.slice(1));
  const out: PathItem = { ...item };
  for (const m of METHODS) {
    const op = item[m] as Record<string, unknown> | undefined;
    if (op !== undefined && op.operationId === undefined) out[m] = { operationId: m + words.join(''), ...op };
  }
  return out;
}
