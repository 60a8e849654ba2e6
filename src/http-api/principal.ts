import type { FastifyRequest } from 'fastify';
import type { Principal } from '../auth/index.js';
import { HookdError } from '../errors/index.js';

const PRINCIPAL = Symbol('principal');

/** Set by the server's authentication hook (src/server/auth-hook.ts) before any handler runs. */
export function attachPrincipal(req: FastifyRequest, principal: Principal): void {
  (req as unknown as Record<symbol, Principal>)[PRINCIPAL] = principal;
}

/** Who made this request; a route marked `public` has nobody and must not ask. */
export function principalOf(req: FastifyRequest): Principal {
  const p = (req as unknown as Record<symbol, Principal | undefined>)[PRINCIPAL];
  if (!p) throw new HookdError('UNAUTHENTICATED', 'not authenticated');
  return p;
}
