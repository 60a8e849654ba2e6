import type { FastifyInstance } from 'fastify';
import { consoleRoutes } from '../console/console.js';
import { listenRoute } from '../listen/index.js';
import { deliveryRoutes } from '../server/routes/deliveries.js';
import { reloadRoutes } from '../server/routes/reload.js';
import { tailRoute } from '../server/routes/tail-route.js';
import { userRoutes } from '../server/routes/users.js';
import { reportApi } from './report-api.js';

/**
 * What the API serves beyond hooks and hook types, each capability's routes with what they need,
 * so that the daemon's assembly only hands them over.
 */
export interface ApiRoutes {
  report: Parameters<typeof reportApi>[1];
  reload: Parameters<typeof reloadRoutes>[1];
  deliveries: Parameters<typeof deliveryRoutes>[1];
  users: Parameters<typeof userRoutes>[1];
  /** Auto-disable's enable endpoint and the notification endpoints (src/notifications/). */
  operations: { routes(api: FastifyInstance, base: string): void };
  apiBase: string;
  /** The web console's needs; undefined when it is switched off. */
  console: Parameters<typeof consoleRoutes>[1] | undefined;
}

/** Registers the routes of `ApiRoutes` on the API's scope. */
export function registerApiRoutes(api: FastifyInstance, r: ApiRoutes): void {
  reportApi(api, r.report);
  reloadRoutes(api, r.reload);
  deliveryRoutes(api, r.deliveries);
  userRoutes(api, r.users);
  tailRoute(api);
  listenRoute(api);
  r.operations.routes(api, r.apiBase);
  if (r.console) consoleRoutes(api, r.console);
}
