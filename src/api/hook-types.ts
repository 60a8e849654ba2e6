import type { FastifyInstance } from 'fastify';
import { HOOK_TYPES } from '../hook/index.js';
import { resource } from '../http-api/index.js';

export function hookTypeRoutes(app: FastifyInstance): void {
  resource(app, '/hooktypes', { GET: async (_req, reply) => reply.send(HOOK_TYPES) }, { events: true });
}
