import { errors, json, type OpenApiFragment } from '../http-api/index.js';
import { PORTAL_SCOPES } from './access.js';

const brand = {
  type: 'object',
  additionalProperties: false,
  description: "The portal's look for this link, over --portal-brand-file's",
  properties: {
    Title: { type: 'string', maxLength: 80 },
    LogoUrl: { type: 'string', description: 'An http(s) URL, or a path on the console origin' },
    Accent: { type: 'string', pattern: '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$' },
    Theme: { type: 'string', enum: ['light', 'dark', 'auto'] },
  },
};

/** `POST /_hookd/portal-links`: a one-time sign-in to the embeddable portal. */
export const PORTAL_LINKS_OPENAPI: OpenApiFragment = {
  paths: {
    '/_hookd/portal-links': {
      post: {
        summary:
          'A one-time URL that signs a browser in to the portal as a user (admin, or a token with the "portal" permission)',
        requestBody: json({
          type: 'object',
          required: ['User'],
          additionalProperties: false,
          example: { User: 'alice', Ttl: '15m', Scopes: ['hooks:write', 'test'], ReadOnly: false },
          properties: {
            User: { type: 'string', description: 'The user the portal signs in as (not the admin)' },
            Ttl: {
              type: 'string',
              description: 'How long the link may be opened: 15m, 2h, or seconds; default 15m, at most 24h',
            },
            Scopes: {
              type: 'array',
              items: { type: 'string', enum: [...PORTAL_SCOPES] },
              description:
                'What the portal session may do beyond reading its own hooks and deliveries; default all',
            },
            ReadOnly: {
              type: 'boolean',
              description: 'Nothing can be changed in the session; default false',
            },
            Brand: brand,
          },
        }),
        responses: {
          '201': {
            description: 'The link: open it once (an iframe src) before ExpiresAt',
            ...json({
              type: 'object',
              required: ['Url', 'ExpiresAt', 'User', 'Scopes', 'ReadOnly'],
              example: {
                Url: 'https://hookd.example/_hookd/portal/open/k3Jq9xV2mR7tP4wZ8yB1nC6dF0gH5jL2sA9eU3oI7vM',
                ExpiresAt: '2026-11-22T12:15:00.000+00:00',
                User: 'alice',
                Scopes: ['hooks:write', 'test'],
                ReadOnly: false,
              },
              properties: {
                Url: { type: 'string' },
                ExpiresAt: { type: 'string', format: 'date-time' },
                User: { type: 'string' },
                Scopes: { type: 'array', items: { type: 'string' } },
                ReadOnly: { type: 'boolean' },
              },
            }),
          },
          ...errors(400, 401, 403, 404, 409, 503),
        },
      },
    },
  },
};
