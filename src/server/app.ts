import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/index.js';
import type { HookdConfig } from '../config/index.js';
import { clientErrorAnswer } from '../edge/index.js';
import { HookdError } from '../errors/index.js';
import { type ApiFeature, allowedMethods, sendProblem, toProblem } from '../http-api/index.js';
import { ApiIdentity } from '../identity/index.js';
import { DEFAULT_LINGER, lingeringResponse } from '../linger/index.js';
import { printable } from '../util/index.js';
import { apiPathMatcher } from './api-paths.js';
import { installAuth } from './auth-hook.js';
import { registerFeatures } from './features.js';
import { fromFrameworkError, jsonSyntaxError } from './framework-errors.js';
import { openApiFeature } from './openapi.js';
import { schemaCompilersOnDemand } from './schema-compilers.js';

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface SystemState {
  draining(): boolean;
  storeReady(): Promise<boolean>;
}

export interface AppDeps {
  config: Pick<HookdConfig, 'apiBase' | 'bodyLimit' | 'linger'>;
  /** How API callers are identified: hookd tokens alone, or tokens then the identity provider. */
  auth: Authenticator | ApiIdentity;
  logger: Logger;
  system: SystemState;
  eventsEnabled: () => boolean;
  /**
   * Maps an error no route turned into a `HookdError` (a store fault → 503 `STORE_UNAVAILABLE`)
   * before it would become a 500 `INTERNAL`; undefined leaves it to the default.
   */
  mapError?: (err: Error) => HookdError | undefined;
  /**
   * Every API route, each registered by the feature that owns it with its OpenAPI description
   * (src/http-api/); the server adds only its own document, assembled from them.
   */
  features: readonly ApiFeature[];
  /** Everything outside the API: the reverse proxy, or a 404 when there is no upstream. */
  fallback?: NodeHandler;
  /** Upgrade requests outside the API (WebSocket pass-through to the upstream). */
  fallbackUpgrade?: UpgradeHandler;
  /** Upgrade requests inside the API (the live tail). */
  apiUpgrade?: UpgradeHandler;
}

/** `server`: the one that took the request, to hand the connection back to (src/edge/upgrade-gate.ts). */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer, server: Server) => void;

export interface App {
  fastify: FastifyInstance;
  server: Server;
  /**
   * The API alone, for a listener of its own (the console's origin): API paths and the API's
   * upgrades go to it, everything else is 404 (never the proxy).
   */
  /** What the console's own listener serves: the API without the proxy (src/console/listener.ts). */
  apiOnly: { request: NodeHandler; upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void };
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
  let apiHandler!: NodeHandler;
  const fastify = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.config.bodyLimit,
    // Hook Ids and paths are case-sensitive; so are the routes.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    onProtoPoisoning: 'error',
    schemaController: { compilersFactory: schemaCompilersOnDemand },
    onConstructorPoisoning: 'error',
    // A request Node's parser refuses (raw UTF-8 in the URL…) gets a problem document and a log line.
    clientErrorHandler: clientErrorAnswer(deps.logger),
    // Draining is answered by our own onRequest hook (the ops listener's /readyz reports it).
    return503OnClosing: false,
    // Router-level failures (a malformed %-escape, an over-long id) answer as problems too.
    frameworkErrors: (err, _req, reply) => {
      const tooLong = (err as { code?: string }).code === 'FST_ERR_MAX_PARAM_LENGTH';
      return sendProblem(
        reply,
        tooLong
          ? new HookdError('NOT_FOUND', 'no hook with that Id (it is longer than any Id)')
          : new HookdError('BAD_REQUEST', `the request URL is malformed: ${err.message}`),
      );
    },
    serverFactory: (handler) => {
      apiHandler = handler;
      server = createServer(
        { keepAliveTimeout: 65_000, ServerResponse: lingeringResponse(deps.config.linger ?? DEFAULT_LINGER) },
        (req, res) => {
          // Once close() began, answers end their connection so that a busy keep-alive client
          // does not keep it (and the proxy) in use until the drain deadline.
          if (!server.listening) res.setHeader('connection', 'close');
          if (isApi(req.url ?? '/')) handler(req, res);
          else fallback(req, res);
        },
      );
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        const handler = isApi(req.url ?? '/') ? deps.apiUpgrade : deps.fallbackUpgrade;
        if (handler) handler(req, socket, head, server);
        else socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      });
      return server;
    },
  });

  fastify.setErrorHandler((err, req, reply) => {
    const mapped = fromFrameworkError(err as Error, deps.config.bodyLimit) ?? deps.mapError?.(err as Error);
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
  fastify.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0]!;
    // Methods Fastify's router does not know (PROPFIND, TRACE…) land here: still a 405 on a resource.
    const allow = allowedMethods(fastify, path);
    if (allow) {
      reply.header('Allow', allow);
      return sendProblem(
        reply,
        new HookdError(
          'METHOD_NOT_ALLOWED',
          `${req.method} is not allowed on this resource; allowed: ${allow}`,
        ),
      );
    }
    return sendProblem(reply, new HookdError('NOT_FOUND', `no API resource at ${printable(path)}`));
  });
  // JSON only: the built-in text/plain parser would turn a text body into a string "hook".
  fastify.removeAllContentTypeParsers();
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const jsonParser = (
    req: FastifyRequest,
    body: Buffer,
    done: (err: Error | null, body?: unknown) => void,
  ) => {
    let text: string;
    try {
      text = utf8.decode(body);
    } catch {
      return done(new HookdError('MALFORMED_JSON', 'the request body is not valid UTF-8'));
    }
    if (text.trim() === '')
      return done(new HookdError('MALFORMED_JSON', 'the request body is empty; send a JSON document'));
    parseJson(req, text, (err, parsed) => {
      // A forbidden key (__proto__) is valid JSON and keeps the parser's own refusal.
      done(err ? (jsonSyntaxError(text) ?? err) : null, parsed);
    });
  };
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, jsonParser);
  // Lenient about a missing Content-Type (a bare `curl -d @hook.json` sends a form type and is refused
  // with 415 and a hint; a request with no type at all is read as JSON).
  // The hooks that need not wait for anything take a callback: an async hook costs every API
  // request a promise and a turn of the microtask queue.
  fastify.addHook('onRequest', (req, _reply, done) => {
    if (req.headers['content-type'] === undefined && req.method !== 'GET' && req.method !== 'HEAD') {
      const len = req.headers['content-length'];
      if (req.headers['transfer-encoding'] !== undefined || (len !== undefined && len !== '0')) {
        req.headers['content-type'] = 'application/json';
      }
    }
    done();
  });
  fastify.addHook('onResponse', (req, reply, done) => {
    // Routes that say so (the console's static assets) log at debug.
    const quiet = (req.routeOptions.config as { quietLog?: boolean } | undefined)?.quietLog === true;
    const level = quiet ? 'debug' : 'info';
    // Nothing is built for a line the level leaves out (`--log-level warn` under load).
    if ((req.log as Logger).isLevelEnabled(level)) {
      // The path only: a client may put a token in a query string, and the log must never hold one.
      const q = req.url.indexOf('?');
      req.log[level](
        {
          method: req.method,
          path: q === -1 ? req.url : req.url.slice(0, q),
          status: reply.statusCode,
          durationMs: Math.round(reply.elapsedTime * 10) / 10,
        },
        'api request',
      );
    }
    done();
  });
  fastify.addHook('onRequest', (req, _reply, done) => {
    const flags = (req.routeOptions.config ?? {}) as { public?: boolean };
    if (deps.system.draining() && !flags.public) {
      done(
        new HookdError(
          'UNAVAILABLE',
          'hookd is shutting down; retry against another instance or after the restart',
          {
            headers: { 'retry-after': '1' },
          },
        ),
      );
      return;
    }
    done();
  });

  await fastify.register(
    async (api) => {
      const auth = deps.auth instanceof ApiIdentity ? deps.auth : new ApiIdentity({ tokens: deps.auth });
      installAuth(api, auth, deps.eventsEnabled);
      registerFeatures(api, [...deps.features, openApiFeature(deps.config.apiBase, deps.features)]);
    },
    { prefix: deps.config.apiBase === '/' ? '' : deps.config.apiBase },
  );
  await fastify.ready();
  const apiOnly: App['apiOnly'] = {
    request: (req, res) => {
      if (isApi(req.url ?? '/')) apiHandler(req, res);
      else
        res
          .writeHead(404, { 'content-type': 'application/problem+json' })
          .end(
            JSON.stringify(
              toProblem(new HookdError('NOT_FOUND', 'only hookd is served here, no proxied paths')),
            ),
          );
    },
    upgrade: (req, socket, head) => {
      if (isApi(req.url ?? '/') && deps.apiUpgrade) deps.apiUpgrade(req, socket, head, server);
      else socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    },
  };
  return { fastify, server, apiOnly };
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
