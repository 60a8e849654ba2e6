import type { FastifyReply, FastifyRequest } from 'fastify';
import { HookdError } from '../errors/index.js';
import type { Html } from './html.js';
import type { PageContext } from './layout.js';
import type { Session } from './sessions.js';

export interface ConsoleRequestContext {
  session: Session;
  ctx: PageContext;
}

export const SESSION = Symbol('console-session');

/** The signed-in session of a console request (set by the console's preHandler). */
export function sessionOf(req: FastifyRequest): ConsoleRequestContext {
  const s = (req as unknown as Record<symbol, ConsoleRequestContext | undefined>)[SESSION];
  if (!s) throw new HookdError('UNAUTHENTICATED', 'sign in to the console first');
  return s;
}

/** Sends a page or a fragment. */
export function sendHtml(reply: FastifyReply, body: Html, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(body.text);
}

export function isHtmx(req: FastifyRequest): boolean {
  return req.headers['hx-request'] === 'true';
}

export function formOf(req: FastifyRequest): Record<string, string> {
  const b = req.body;
  return b && typeof b === 'object' ? (b as Record<string, string>) : {};
}

export function queryOf(req: FastifyRequest): Record<string, string> {
  const q = req.query as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(q ?? {})) if (typeof v === 'string') out[k] = v;
  return out;
}
