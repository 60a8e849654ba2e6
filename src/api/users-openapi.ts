import { errors, hookIdParam as idParam, json, type OpenApiFragment } from '../http-api/index.js';

/** `/_hookd/users…`: users and tokens, admin only (a user may read their own record). */
export function usersOpenApi(): OpenApiFragment {
  const user = json({ $ref: '#/components/schemas/User' });
  const token = json({ $ref: '#/components/schemas/Token' });
  const name = { name: 'name', in: 'path', required: true, schema: { type: 'string' } };
  const paths = {
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
          ...json({ type: 'object', properties: { Label: { type: 'string' } }, example: { Label: 'ci' } }),
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
  return {
    paths,
    schemas: {
      User: {
        type: 'object',
        required: ['Name', 'Scopes'],
        example: {
          Name: 'alice',
          Scopes: ['own'],
          Permissions: [],
          Created: '2026-11-22T12:00:00.000+00:00',
        },
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
            items: { type: 'string', enum: ['report', 'portal'] },
            description:
              'What the admin granted beyond owning hooks. "report": the user\'s tokens may report requests made by anyone (POST /_hookd/report with any User; every matching hook fires). "portal": the user\'s tokens may make portal links for other users (POST /_hookd/portal-links). Default []; admin always ["report", "portal"]. Left out of a PUT: kept',
          },
          Created: { type: 'string', format: 'date-time', readOnly: true },
        },
      },
      Token: {
        type: 'object',
        required: ['Id', 'User', 'Label', 'Created'],
        example: {
          Id: '4f9c2a7e1b3d',
          User: 'alice',
          Label: 'ci',
          Created: '2026-11-22T12:00:00.000+00:00',
        },
        properties: {
          Id: { type: 'string' },
          User: { type: 'string' },
          Label: { type: 'string' },
          Created: { type: 'string', format: 'date-time' },
          LastUsed: {
            type: 'string',
            format: 'date-time',
            description: 'To within a minute; absent: never used',
          },
          Token: { type: 'string', description: 'The token itself: in the answer to its creation only' },
        },
      },
    },
  };
}
