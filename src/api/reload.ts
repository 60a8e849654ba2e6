import type { FastifyInstance } from 'fastify';
import { HookdError } from '../errors/index.js';
import { type ApiFeature, errors, json, principalOf, resource } from '../http-api/index.js';

export interface Reloadable {
  /** Re-reads the configuration and applies it; throws a HookdError (and keeps the old one) when invalid. */
  reload(): Promise<{ applied: string[]; restartRequired: string[] }>;
}

/** `POST /reload`: what `hookctl reload` and systemd's ExecReload call. Admin only. */
export function reloadRoutes(app: FastifyInstance, daemon: Reloadable): void {
  resource(app, '/_hookd/reload', {
    POST: async (req, reply) => {
      if (principalOf(req).user !== 'admin')
        throw new HookdError('FORBIDDEN', 'only the admin user may reload hookd');
      return reply.send(await daemon.reload());
    },
  });
}

/** `POST /_hookd/reload`. */
export function reloadFeature(daemon: Reloadable): ApiFeature {
  return {
    name: 'reload',
    register: (api) => reloadRoutes(api, daemon),
    openApi: {
      paths: {
        '/_hookd/reload': {
          post: {
            summary: 'Re-read the configuration (admin only)',
            responses: {
              '200': {
                description: 'The settings applied, and those that take a restart',
                ...json({
                  type: 'object',
                  required: ['applied', 'restartRequired'],
                  example: { applied: ['logLevel', 'retrySchedule'], restartRequired: ['listen'] },
                  properties: {
                    applied: { type: 'array', items: { type: 'string' } },
                    restartRequired: { type: 'array', items: { type: 'string' } },
                  },
                }),
              },
              ...errors(400, 401, 403),
            },
          },
        },
      },
    },
  };
}
