import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HookdError } from '../errors/index.js';
import { sameToken } from './sessions.js';

/**
 * What every HTML page plugin (the console, the portal) sets up first: its routes are public to
 * the API's Bearer authentication (each page authenticates by its own session), a request on a
 * listener that does not serve the pages is a 404 saying where they are (`notHere`), and HTML
 * forms are parsed into plain objects.
 */
export function pagePluginBasics(
  app: FastifyInstance,
  servedHere: ((req: IncomingMessage) => boolean) | undefined,
  notHere: string,
): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config as object), public: true } as typeof route.config;
  });
  if (servedHere)
    app.addHook('onRequest', async (req) => {
      if (!servedHere(req.raw)) throw new HookdError('NOT_FOUND', notHere);
    });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
}

/**
 * A page request's error as the problem to show: a hookd error as it is, a 413 as too large a
 * form, another client error as a bad request; undefined for a fault of hookd's own (a 500).
 */
export function pageErrorOf(err: unknown): HookdError | undefined {
  if (err instanceof HookdError) return err;
  const status = (err as { statusCode?: number }).statusCode;
  if (status === 413) return new HookdError('PAYLOAD_TOO_LARGE', 'the form is too large');
  if (status && status < 500) return new HookdError('BAD_REQUEST', (err as Error).message);
  return undefined;
}

/**
 * Refuses a request that changes something (not GET or HEAD) unless it carries the session's
 * CSRF token, in the `X-CSRF-Token` header (htmx) or the `_csrf` form field.
 */
export function checkCsrf(req: FastifyRequest, csrf: string): void {
  if (req.method === 'GET' || req.method === 'HEAD') return;
  const header = req.headers['x-csrf-token'];
  const field = ((req.body ?? {}) as Record<string, string>)._csrf;
  if (!sameToken(typeof header === 'string' ? header : field, csrf))
    throw new HookdError('FORBIDDEN', 'the CSRF token is missing or wrong; reload the page and try again');
}

/** Whether the browser reached hookd over https: directly, or per a trusted proxy's X-Forwarded-Proto. */
export function isHttps(trusts: (address: string | undefined) => boolean, req: IncomingMessage): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  const proto = req.headers['x-forwarded-proto'];
  return (
    typeof proto === 'string' &&
    trusts(req.socket.remoteAddress) &&
    proto.split(',')[0]!.trim().toLowerCase() === 'https'
  );
}
