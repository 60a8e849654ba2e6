import type { FastifyInstance, FastifyRequest } from 'fastify';
import { presentDelivery, presentHook } from '../api/index.js';
import { type ApiFeature, principalOf, resource } from '../http-api/index.js';
import type { HookService } from '../service/index.js';
import { publicKeyOf } from '../signing/index.js';
import type { DeliveryRecord } from '../store/index.js';
import type { NotificationEndpoint } from './notification-endpoint.js';
import type { Notifier } from './notifier.js';
import { NOTIFICATION_OPENAPI_PATHS } from './openapi-paths.js';

export interface NotificationRouteDeps {
  notifier: Notifier;
  /** Its failure history is forgotten when a hook is enabled again. */
  autoDisable: { forget(hookId: string): void };
  hooks: Pick<HookService, 'get' | 'enable'>;
  /** An endpoint's last notification deliveries, newest first. */
  deliveries: (endpointId: string) => Promise<DeliveryRecord[]>;
  /** The API base, for `Location`. */
  base: string;
}

/** The notification endpoints and `POST /hooks/{id}/enable` (auto-disable's way back). */
export function notificationsFeature(deps: NotificationRouteDeps): ApiFeature {
  return {
    name: 'notifications',
    register(api) {
      notificationRoutes(api, deps.notifier, deps.base, deps.deliveries);
      enableRoute(api, deps);
    },
    openApi: { paths: NOTIFICATION_OPENAPI_PATHS },
  };
}

function enableRoute(api: FastifyInstance, deps: NotificationRouteDeps): void {
  resource(
    api,
    '/hooks/:id/enable',
    {
      POST: async (req: FastifyRequest, reply) => {
        const before = await deps.hooks.get(principalOf(req).user, idOf(req));
        const hook = await deps.hooks.enable(before.Owner, before.Id);
        deps.autoDisable.forget(hook.Id);
        if (before.State !== 'active') req.log.info({ hookId: hook.Id }, 'hook enabled');
        return reply.send(presentHook(hook));
      },
    },
    { events: true },
  );
}

/** The API's view of an endpoint (the secret is only ever in the answer to its creation). */
export function presentEndpoint(e: NotificationEndpoint): Record<string, unknown> {
  return {
    Id: e.Id,
    Owner: e.Owner,
    Url: e.Url,
    Events: e.Events,
    Description: e.Description,
    Created: e.Created,
    ...(e.Signature !== undefined && { Signature: e.Signature }),
  };
}

/**
 * `/_hookd/notifications` and `/_hookd/notifications/{id}` (docs/API.md "Notifications"). Each
 * user sees and manages only their own endpoints; another user's is 404 like an unknown one.
 */
function notificationRoutes(
  app: FastifyInstance,
  notifier: Notifier,
  base: string,
  deliveries: (endpointId: string) => Promise<DeliveryRecord[]>,
): void {
  const prefix = base === '/' ? '' : base;
  resource(
    app,
    '/_hookd/notifications',
    {
      GET: async (req, reply) => reply.send(notifier.list(principalOf(req).user).map(presentEndpoint)),
      POST: async (req, reply) => {
        const { endpoint, secret } = await notifier.create(principalOf(req).user, req.body);
        req.log.info({ endpointId: endpoint.Id, owner: endpoint.Owner }, 'notification endpoint created');
        return reply
          .code(201)
          .header('Location', `${prefix}/_hookd/notifications/${endpoint.Id}`)
          .send({ ...presentEndpoint(endpoint), Secret: secret, PublicKey: publicKeyOf(secret) });
      },
    },
    { events: true },
  );
  resource(
    app,
    '/_hookd/notifications/:id',
    {
      GET: async (req, reply) => reply.send(presentEndpoint(notifier.get(principalOf(req).user, idOf(req)))),
      DELETE: async (req, reply) => {
        await notifier.delete(principalOf(req).user, idOf(req));
        req.log.info({ endpointId: idOf(req) }, 'notification endpoint deleted');
        return reply.code(204).send();
      },
    },
    { events: true },
  );
  resource(
    app,
    '/_hookd/notifications/:id/deliveries',
    {
      GET: async (req, reply) => {
        const e = notifier.get(principalOf(req).user, idOf(req));
        return reply.send((await deliveries(e.Id)).map((d) => presentDelivery(d)));
      },
    },
    { events: true },
  );
}

function idOf(req: FastifyRequest): string {
  return (req.params as { id: string }).id;
}
