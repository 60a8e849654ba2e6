import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../observability/metrics.js';
import { resource } from '../route-table.js';

/** `GET /metrics` in Prometheus text format; unauthenticated like /healthz (bind hookd to loopback or filter it). */
export function metricsRoutes(app: FastifyInstance, metrics: Metrics): void {
  resource(
    app,
    '/metrics',
    { GET: async (_req, reply) => reply.type(metrics.contentType).send(await metrics.text()) },
    { public: true },
  );
}
