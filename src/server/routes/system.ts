import type { FastifyInstance } from 'fastify';
import { buildOpenApi } from '../openapi.js';
import { resource } from '../route-table.js';

export interface SystemState {
  draining(): boolean;
  storeReady(): Promise<boolean>;
}

/**
 * The unauthenticated API description. Liveness, readiness and metrics are on the operations
 * listener (src/ops/), not on the service's port.
 */
export function systemRoutes(
  app: FastifyInstance,
  base: string,
  _state: SystemState,
  featurePaths: Record<string, unknown> = {},
): void {
  const doc = buildOpenApi(base, featurePaths);
  resource(app, '/_hookd/openapi.json', { GET: async (_req, reply) => reply.send(doc) }, { public: true });
}
