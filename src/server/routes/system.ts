import type { FastifyInstance } from 'fastify';
import { buildOpenApi } from '../openapi.js';
import { resource } from '../route-table.js';

export interface SystemState {
  draining(): boolean;
  storeReady(): Promise<boolean>;
}

/** Unauthenticated endpoints: liveness, readiness and the API description. */
export function systemRoutes(app: FastifyInstance, base: string, state: SystemState): void {
  resource(app, '/healthz', { GET: async (_req, reply) => reply.send({ status: 'ok' }) }, { public: true });
  resource(
    app,
    '/readyz',
    {
      GET: async (_req, reply) => {
        const draining = state.draining();
        const store = await state.storeReady().catch(() => false);
        const ready = !draining && store;
        return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', draining, store });
      },
    },
    { public: true },
  );
  const doc = buildOpenApi(base);
  resource(app, '/_hookd/openapi.json', { GET: async (_req, reply) => reply.send(doc) }, { public: true });
}
