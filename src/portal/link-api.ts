import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isValidUserName, USER_NAME_RULE } from '../auth/index.js';
import { type FieldError, HookdError } from '../errors/index.js';
import { type ApiFeature, OWN_PREFIX, principalOf, resource } from '../http-api/index.js';
import type { UserStore } from '../store/index.js';
import { ADMIN_USER, mayMakePortalLinks } from '../users/index.js';
import { parsePortalScopes } from './access.js';
import { type Brand, parseBrand } from './brand.js';
import { PORTAL_LINKS_OPENAPI } from './link-openapi.js';
import type { LinkGrant, PortalLinks } from './links.js';
import { PORTAL_PATH } from './pages.js';

export const PORTAL_LINKS = `${OWN_PREFIX}/portal-links`;
const DEFAULT_TTL_S = 15 * 60;
const MAX_TTL_S = 24 * 3600;
const MIN_TTL_S = 1;
const TTL_RULE = 'must be a duration such as 15m or 2h (or seconds), from 1s to 24h';
const FIELDS = ['User', 'Ttl', 'Scopes', 'ReadOnly', 'Brand'];

export interface PortalLinkDeps {
  links: PortalLinks;
  users: Pick<UserStore, 'getUser'>;
  /** `--portal-brand-file`'s look, under the link's own `Brand`. */
  brand: Brand;
  /**
   * Where browsers reach the portal (the console's listener, `--portal-base-url`, …), without the
   * API base; undefined when the console is off.
   */
  portalOrigin: (req: FastifyRequest) => string | undefined;
  base: string;
  now?: () => number;
}

/** `POST /_hookd/portal-links` (docs/API.md "Embeddable portal"): a one-time sign-in URL for a user. */
export function portalLinksFeature(deps: PortalLinkDeps): ApiFeature {
  return { name: 'portal-links', register: (api) => linkRoutes(api, deps), openApi: PORTAL_LINKS_OPENAPI };
}

function linkRoutes(app: FastifyInstance, deps: PortalLinkDeps): void {
  const now = deps.now ?? Date.now;
  resource(app, PORTAL_LINKS, {
    POST: async (req, reply) => {
      const caller = principalOf(req).user;
      if (caller !== ADMIN_USER && !mayMakePortalLinks(await deps.users.getUser(caller)))
        throw new HookdError(
          'FORBIDDEN',
          'making portal links needs the admin or the "portal" permission (hookctl users grant NAME --permission portal)',
        );
      const input = checked(req.body);
      const user = await deps.users.getUser(input.user);
      if (!user)
        throw new HookdError(
          'NOT_FOUND',
          `User: no user "${input.user}"; add it first with: hookctl users add ${input.user}`,
        );
      const origin = deps.portalOrigin(req);
      if (origin === undefined)
        throw new HookdError(
          'CONFLICT',
          'the web console is off (--console-listen off or --no-console), and the portal is served on its listener',
        );
      const expiresAt = now() + input.ttlS * 1000;
      const grant: LinkGrant = {
        user: input.user,
        scopes: input.scopes,
        readOnly: input.readOnly,
        brand: { ...deps.brand, ...input.brand },
        expiresAt,
      };
      const token = await deps.links.create(grant);
      req.log.info(
        { user: input.user, by: caller, readOnly: input.readOnly, ttlMs: input.ttlS * 1000 },
        'portal link made',
      );
      const base = deps.base === '/' ? '' : deps.base;
      return reply.code(201).send({
        Url: `${origin}${base}${PORTAL_PATH}/open/${token}`,
        ExpiresAt: new Date(expiresAt).toISOString(),
        User: input.user,
        Scopes: input.scopes,
        ReadOnly: input.readOnly,
      });
    },
  });
}

interface LinkInput {
  user: string;
  ttlS: number;
  scopes: LinkGrant['scopes'];
  readOnly: boolean;
  brand: Brand;
}

/** The request body, checked: every problem at once, each naming its field and rule. */
function checked(body: unknown): LinkInput {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw invalid([
      { field: '(body)', message: 'must be a JSON object such as {"User": "alice", "Ttl": "15m"}' },
    ]);
  const b = body as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const k of Object.keys(b))
    if (!FIELDS.includes(k))
      errors.push({ field: k, message: `is not a field of a portal link; known: ${FIELDS.join(', ')}` });
  const user = b.User;
  if (typeof user !== 'string' || !isValidUserName(user))
    errors.push({
      field: 'User',
      message: `is required: the user the portal signs in as, ${USER_NAME_RULE}`,
    });
  else if (user === ADMIN_USER)
    errors.push({
      field: 'User',
      message:
        "must not be the admin: the portal is for the service's users, and the admin is the operator (the console is theirs)",
    });
  const ttlS = b.Ttl === undefined ? DEFAULT_TTL_S : ttlSeconds(b.Ttl);
  if (Number.isNaN(ttlS) || ttlS < MIN_TTL_S || ttlS > MAX_TTL_S)
    errors.push({ field: 'Ttl', message: `${TTL_RULE}; the closest valid value is ${closestTtl(ttlS)}` });
  const scopes = parsePortalScopes(b.Scopes);
  for (const m of scopes.errors) errors.push({ field: 'Scopes', message: m });
  if (b.ReadOnly !== undefined && typeof b.ReadOnly !== 'boolean')
    errors.push({ field: 'ReadOnly', message: 'must be true or false' });
  const brand = b.Brand === undefined ? { brand: {}, errors: [] } : parseBrand(b.Brand, 'Brand.');
  errors.push(...brand.errors);
  if (errors.length > 0) throw invalid(errors);
  return {
    user: user as string,
    ttlS,
    scopes: scopes.scopes,
    readOnly: b.ReadOnly === true,
    brand: brand.brand,
  };
}

/** Seconds of `15m`, `2h`, `90s`, `900` (a number of seconds); NaN for anything else. */
export function ttlSeconds(v: unknown): number {
  if (typeof v === 'number') return Number.isFinite(v) ? v : Number.NaN;
  const m = typeof v === 'string' ? /^(\d+(?:\.\d+)?)([smh]?)$/.exec(v.trim()) : null;
  if (!m) return Number.NaN;
  return Number(m[1]) * ({ '': 1, s: 1, m: 60, h: 3600 } as Record<string, number>)[m[2]!]!;
}

function closestTtl(s: number): string {
  if (Number.isNaN(s)) return '15m';
  return s > MAX_TTL_S ? '24h' : '1s';
}

function invalid(errors: FieldError[]): HookdError {
  return new HookdError('BAD_REQUEST', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });
}
