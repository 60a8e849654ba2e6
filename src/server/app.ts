import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import type { HookdConfig } from '../config/config.js';
import { HookdError } from '../errors/catalog.js';
import type { HookService } from '../service/hook-service.js';
import { apiPathMatcher } from './api-paths.js';
import { installAuth } from './auth-hook.js';
import { fromFrameworkError, sendProblem, toProblem } from './problem.js';
import { hookTypeRoutes } from './routes/hook-types.js';
import { hookRoutes } from './routes/hooks.js';
import { type SystemState, systemRoutes } from './routes/system.js';

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface AppDeps {
  config: Pick<HookdConfig, 'apiBase' | 'bodyLimit'>;
  hooks: HookService;
  auth: Authenticator;
  logger: Logger;
  system: SystemState;
  eventsEnabled: () => boolean;
  /** Plugins that add routes (proxy-side features register here as they arrive). */
  extraRoutes?: (app: FastifyInstance) => void;
  /** Everything outside the API: the reverse proxy, or a 404 when there is no upstream. */
  fallback?: NodeHandler;
  /** Upgrade requests outside the API (WebSocket pass-through to the upstream). */
  fallbackUpgrade?: UpgradeHandler;
  /** Upgrade requests inside the API (the live tail). */
  apiUpgrade?: UpgradeHandler;
}

export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

export interface App {
  fastify: FastifyInstance;
  server: Server;
}

/**
 * Builds the HTTP server without listening (the daemon and the tests listen). One Node server
 * takes every request: API paths go to Fastify, everything else to the fallback (the proxy),
 * which stays off Fastify's per-request path on purpose (PERF-NOTES: the proxy is the hot path).
 */
export async function buildApp(deps: AppDeps): Promise<App> {
  const isApi = apiPathMatcher(deps.config.apiBase);
  const fallback = deps.fallback ?? notFound;
  let server!: Server;
  const fastify = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.config.bodyLimit,
    // Hook Ids and paths are case-sensitive; so are the routes.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    return503OnClosing: true,
    serverFactory: (handler) => {
      server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
        if (isApi(req.url ?? '/')) handler(req, res);
        else fallback(req, res);
      });
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        const handler = isApi(req.url ?? '/') ? deps.apiUpgrade : deps.fallbackUpgrade;
        if (handler) handler(req, socket, head);
        else socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      });
      return server;
    },
  });

  fastify.setErrorHandler((err, req, reply) => {
    const mapped = fromFrameworkError(err as Error, deps.config.bodyLimit);
    if (mapped) {
      if (mapped.status >= 500) req.log.warn({ err }, mapped.message);
      return sendProblem(reply, mapped);
    }
    req.log.error({ err }, 'unexpected error');
    return sendProblem(
      reply,
      new HookdError('INTERNAL', 'hookd failed to handle this request; the log has details'),
    );
  });
  fastify.setNotFoundHandler((req, reply) =>
    sendProblem(reply, new HookdError('NOT_FOUND', `no API resource at ${req.url.split('?')[0]}`)),
  );
  // Lenient about a missing Content-Type (a bare `curl -d @hook.json` sends a form type and is refused
  // with 415 and a hint; a request with no type at all is read as JSON).
  fastify.addHook('onRequest', async (req) => {
    if (req.headers['content-type'] === undefined && req.method !== 'GET' && req.method !== 'HEAD') {
      const len = req.headers['content-length'];
      if (req.headers['transfer-encoding'] !== undefined || (len !== undefined && len !== '0')) {
        req.headers['content-type'] = 'application/json';
      }
    }
  });
  fastify.addHook('onResponse', async (req, reply) => {
    req.log.info(
      {
        method: req.method,
        url: req.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'api request',
    );
  });

  await fastify.register(
    async (api) => {
      installAuth(api, deps.auth, deps.eventsEnabled);
      hookRoutes(api, deps.hooks, deps.config.apiBase);
      hookTypeRoutes(api);
      systemRoutes(api, deps.config.apiBase, deps.system);
      deps.extraRoutes?.(api);
    },
    { prefix: deps.config.apiBase === '/' ? '' : deps.config.apiBase },
  );
  await fastify.ready();
  return { fastify, server };
}

function notFound(req: IncomingMessage, res: ServerResponse): void {
  const body = JSON.stringify(
    toProblem(
      new HookdError(
        'NOT_FOUND',
        `no upstream is configured, so ${req.url?.split('?')[0]} is not served (start hookd with --upstream URL)`,
      ),
    ),
  );
  res.writeHead(404, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
