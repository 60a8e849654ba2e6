import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { HookdError } from '../errors/index.js';

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
