import type { FastifyInstance } from 'fastify';
import { HookdError } from '../../errors/catalog.js';
import { principalOf } from '../auth-hook.js';
import { resource } from '../route-table.js';

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
