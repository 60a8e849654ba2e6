import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { PageContext } from './layout.js';
import type { PageDeps } from './page-deps.js';
import { deliveryPages } from './pages/deliveries.js';
import { hookPages } from './pages/hooks.js';
import { livePage } from './pages/live.js';
import { type ConsoleRequestContext, SESSION } from './respond.js';

/**
 * What another room serves of the console: the pages of one user's own world (hooks, the
 * editor, deliveries, the live view), registered on its own Fastify scope. That scope signs its
 * requests in itself (`enterPages`) and decides which of the routes it lets through; the pages
 * act as `ctx.user` through the same services, as they do in the console.
 */
export function userWorldPages(app: FastifyInstance, deps: PageDeps): void {
  hookPages(app, deps);
  deliveryPages(app, deps);
  livePage(app, deps);
}

/** Hands the pages a request's signed-in user, CSRF token and shell (before their handlers run). */
export function enterPages(req: FastifyRequest, ctx: PageContext): void {
  const t = Date.now();
  const entered: ConsoleRequestContext = {
    session: { user: ctx.user, csrf: ctx.csrf, created: t, lastSeen: t },
    ctx,
  };
  (req as unknown as Record<symbol, ConsoleRequestContext>)[SESSION] = entered;
}
