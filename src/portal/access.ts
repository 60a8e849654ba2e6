/**
 * What a portal session may do: every console route the portal serves, with the scope it needs
 * and whether it changes anything (refused when the link was read-only). A route that is not in
 * this table is not in the portal (404), so a page the console gains later stays out until it is
 * listed here with its rule.
 */

/** The scopes a link may give; a link without `Scopes` gives them all. */
export const PORTAL_SCOPES = ['hooks:write', 'secrets', 'test', 'redeliver', 'live'] as const;
export type PortalScope = (typeof PORTAL_SCOPES)[number];

export const SCOPE_MEANING: Record<PortalScope, string> = {
  'hooks:write': 'create, edit and delete hooks',
  secrets: "reveal and rotate a hook's signing secret",
  test: 'send test events',
  redeliver: 'redeliver deliveries',
  live: 'the live view',
};

interface Rule {
  /** Needed beyond signing in; absent: every portal session may (reading its own hooks and deliveries). */
  scope?: PortalScope;
  /** Changes something: refused in a read-only session. */
  write?: boolean;
}

/** Keyed by `METHOD path`, the path as the console registers it (below the portal's root). */
const RULES: Record<string, Rule> = {
  'GET /hooks': {},
  'GET /hooks/:id': {},
  'GET /deliveries/:id': {},
  'GET /hooks/new': { scope: 'hooks:write', write: true },
  'POST /hooks': { scope: 'hooks:write', write: true },
  'POST /hooks/validate': { scope: 'hooks:write', write: true },
  'POST /hooks/dry-run': { scope: 'hooks:write', write: true },
  'GET /hooks/:id/edit': { scope: 'hooks:write', write: true },
  'POST /hooks/:id': { scope: 'hooks:write', write: true },
  'POST /hooks/:id/delete': { scope: 'hooks:write', write: true },
  'POST /hooks/:id/test': { scope: 'test', write: true },
  'POST /hooks/:id/secret': { scope: 'secrets' },
  'POST /hooks/:id/secret/rotate': { scope: 'secrets', write: true },
  'POST /hooks/:id/redeliver/count': { scope: 'redeliver', write: true },
  'POST /hooks/:id/redeliver': { scope: 'redeliver', write: true },
  'POST /deliveries/:id/redeliver': { scope: 'redeliver', write: true },
  'GET /live': { scope: 'live' },
};

export type Verdict = { ok: true } | { ok: false; status: 403 | 404; reason: string };

/** Whether a session with these scopes (read-only or not) may call `method path`. */
export function judge(
  method: string,
  path: string,
  session: { scopes: readonly PortalScope[]; readOnly: boolean },
): Verdict {
  const m = method === 'HEAD' ? 'GET' : method;
  const rule = RULES[`${m} ${path}`];
  if (!rule) return { ok: false, status: 404, reason: 'There is no such page in this portal.' };
  if (rule.scope && !session.scopes.includes(rule.scope))
    return {
      ok: false,
      status: 403,
      reason: `This portal link does not allow this (${SCOPE_MEANING[rule.scope]}).`,
    };
  if (rule.write && session.readOnly)
    return { ok: false, status: 403, reason: 'This portal is read-only: nothing can be changed here.' };
  return { ok: true };
}

/** The scopes of a link's `Scopes`, checked; errors name the entry. */
export function parsePortalScopes(input: unknown): { scopes: PortalScope[]; errors: string[] } {
  if (input === undefined) return { scopes: [...PORTAL_SCOPES], errors: [] };
  if (!Array.isArray(input))
    return { scopes: [], errors: [`must be a list of portal scopes; known: ${PORTAL_SCOPES.join(', ')}`] };
  const errors: string[] = [];
  const scopes: PortalScope[] = [];
  input.forEach((s, i) => {
    if (typeof s !== 'string' || !(PORTAL_SCOPES as readonly string[]).includes(s))
      errors.push(
        `[${i}] ${JSON.stringify(s)?.slice(0, 64)} is not a portal scope; known: ${PORTAL_SCOPES.join(', ')}`,
      );
    else if (!scopes.includes(s as PortalScope)) scopes.push(s as PortalScope);
  });
  return { scopes, errors };
}
