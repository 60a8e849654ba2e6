import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type FieldError, HookdError } from '../errors/index.js';
import type { Hook } from '../hook/index.js';
import { HOOK_ID_SHAPE, lintHook } from '../hook/index.js';
import { type ApiFeature, principalOf, resource } from '../http-api/index.js';
import type { HookService } from '../service/index.js';
import { hookTypeRoutes } from './hook-types.js';
import { checkIfMatch, etagOf } from './hook-version.js';
import { hooksOpenApi } from './hooks-openapi.js';
import { parsePageQuery } from './page-query.js';
import { type HookStateView, presentHook } from './present-hook.js';

/** `/hooks` and `/hooks/{id}` (SPEC §7). */
export function hookRoutes(
  app: FastifyInstance,
  hooks: HookService,
  base: string,
  // `State: "unverified"` while the callback origin has not agreed (src/verification/).
  view?: HookStateView,
): void {
  const present = (h: Hook) => presentHook(h, view);
  const prefix = base === '/' ? '' : base;

  resource(
    app,
    '/hooks',
    {
      GET: async (req, reply) => {
        const page = parsePage(req);
        const result = await hooks.list(principalOf(req).user, page);
        if (result.next !== undefined && page.limit !== undefined) {
          const next = `${prefix}/hooks?limit=${page.limit}&after=${encodeURIComponent(result.next)}`;
          reply.header('Link', `<${next}>; rel="next"`);
        }
        return reply.send(result.items.map(present));
      },
      POST: async (req, reply) => {
        const hook = await hooks.create(principalOf(req).user, req.body);
        req.log.info({ hookId: hook.Id, owner: hook.Owner }, 'hook created');
        return reply
          .code(201)
          .header('Location', `${prefix}/hooks/${hook.Id}`)
          .header('ETag', etagOf(hook))
          .send(withWarnings(hook, view));
      },
    },
    { events: true },
  );

  // The checks of create/replace (and the lint's warnings) without storing anything.
  resource(
    app,
    '/_hookd/validate',
    {
      POST: async (req, reply) => {
        // A document carrying its hook's `Id` (`hookctl get` output) is checked as that hook's
        // replace: its own Name is not a conflict.
        const id = (req.body as { Id?: unknown } | null | undefined)?.Id;
        const config = await hooks.check(
          req.body,
          principalOf(req).user,
          typeof id === 'string' ? id : undefined,
        );
        const { warnings } = lintHook(config);
        return reply.send({
          ...config,
          ...(warnings.length && { Warnings: warnings.map((w) => ({ Field: w.field, Message: w.message })) }),
        });
      },
    },
    { events: true },
  );

  resource(
    app,
    '/hooks/:id',
    {
      GET: async (req, reply) => {
        const hook = await hooks.get(principalOf(req).user, idOf(req));
        return reply.header('ETag', etagOf(hook)).send(present(hook));
      },
      PUT: async (req, reply) => {
        const user = principalOf(req).user;
        if (req.headers['if-match'] !== undefined) {
          checkIfMatch(req.headers['if-match'], await hooks.get(user, idOf(req)));
        }
        const hook = await hooks.replace(user, idOf(req), req.body);
        req.log.info({ hookId: hook.Id, owner: hook.Owner }, 'hook replaced');
        return reply.header('ETag', etagOf(hook)).send(withWarnings(hook, view));
      },
      DELETE: async (req, reply) => {
        // `hookctl apply --prune` deletes the version it read: a hook changed since is kept (412).
        if (req.headers['if-match'] !== undefined) {
          checkIfMatch(req.headers['if-match'], await hooks.get(principalOf(req).user, idOf(req)));
        }
        await hooks.delete(principalOf(req).user, idOf(req));
        req.log.info({ hookId: idOf(req) }, 'hook deleted');
        return reply.code(204).send();
      },
    },
    { events: true },
  );
}

/** The stored hook and, when there are any, the lint's warnings (docs/API.md "Warnings"). */
function withWarnings(hook: Hook, view?: HookStateView): Record<string, unknown> {
  const { warnings } = lintHook(hook);
  const body = presentHook(hook, view);
  if (warnings.length) body.Warnings = warnings.map((w) => ({ Field: w.field, Message: w.message }));
  return body;
}

function idOf(req: FastifyRequest): string {
  return (req.params as { id: string }).id;
}

function parsePage(req: FastifyRequest): { limit?: number; after?: string } {
  const errors: FieldError[] = [];
  const page = parsePageQuery(
    req.query as Record<string, unknown>,
    { shape: HOOK_ID_SHAPE, rule: 'must be a hook Id' },
    errors,
  );
  if (errors.length) {
    throw new HookdError('BAD_REQUEST', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });
  }
  return page;
}

/** The hook API: `/hooks…`, `/hooktypes` and `/_hookd/validate`. */
export function hooksFeature(deps: {
  hooks: HookService;
  base: string;
  /** The state shown when it is not the stored one (`unverified`). */
  hookStateView?: HookStateView | undefined;
}): ApiFeature {
  return {
    name: 'hooks',
    register(api) {
      hookRoutes(api, deps.hooks, deps.base, deps.hookStateView);
      hookTypeRoutes(api);
    },
    openApi: hooksOpenApi(),
  };
}
