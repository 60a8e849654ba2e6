import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { HookdError } from '../errors/index.js';
import { sendProblem } from './problem.js';

type Handler = (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
export type RouteFlags = { public?: boolean; events?: boolean };

/** Every resource's URL shape and allowed methods, per server, for 405s on unknown methods. */
const RESOURCES = new WeakMap<object, { url: string; shape: RegExp; allow: string }[]>();

/** The `Allow` value of the resource at `path`, if there is one. */
export function allowedMethods(app: FastifyInstance, path: string): string | undefined {
  return RESOURCES.get(app.server)?.find((r) => r.shape.test(path))?.allow;
}

/** Every resource registered on this server: its URL template (e.g. `/hooks/:id`) and `Allow`. */
export function registeredResources(app: FastifyInstance): { url: string; allow: string }[] {
  return (RESOURCES.get(app.server) ?? []).map(({ url, allow }) => ({ url, allow }));
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

/**
 * Registers a resource's handlers and answers every other method with 405 and an `Allow` header
 * (OPTIONS with 204 and `Allow`), which Fastify's router alone would answer with 404.
 */
export function resource(
  app: FastifyInstance,
  url: string,
  handlers: Partial<Record<'GET' | 'POST' | 'PUT' | 'DELETE', Handler>>,
  flags: RouteFlags = {},
): void {
  const methods = Object.keys(handlers) as (keyof typeof handlers)[];
  const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])].join(', ');
  const shape = new RegExp(`^${escapeRegExp(app.prefix + url).replace(/:[A-Za-z]+/g, '[^/]+')}/?$`);
  const known = RESOURCES.get(app.server) ?? [];
  known.push({ url, shape, allow });
  RESOURCES.set(app.server, known);
  for (const m of methods) {
    app.route({ method: m, url, handler: handlers[m]!, config: flags } as RouteOptions);
  }
  const others = ALL_METHODS.filter((m) => !allow.split(', ').includes(m));
  app.route({
    method: others as unknown as RouteOptions['method'],
    url,
    config: { ...flags, public: true, events: false },
    handler: async (req, reply) => {
      reply.header('Allow', allow);
      if (req.method === 'OPTIONS') return reply.code(204).send();
      return sendProblem(
        reply,
        new HookdError(
          'METHOD_NOT_ALLOWED',
          `${req.method} is not allowed on this resource; allowed: ${allow}`,
        ),
      );
    },
  });
}

/**
 * A resource that only speaks WebSocket (the server's upgrade handler takes the real request):
 * a plain GET is 426 with `Upgrade: websocket` and `message` saying how to connect.
 */
export function websocketOnly(app: FastifyInstance, url: string, message: string): void {
  resource(
    app,
    url,
    {
      GET: async (_req, reply) => {
        reply.header('Upgrade', 'websocket');
        throw new HookdError('UPGRADE_REQUIRED', message);
      },
    },
    { events: true },
  );
}
