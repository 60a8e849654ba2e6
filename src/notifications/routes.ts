import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf } from '../server/auth-hook.js';
import { resource } from '../server/route-table.js';
import { presentDelivery } from '../server/routes/deliveries.js';
import { publicKeyOf } from '../signing/index.js';
import type { DeliveryRecord } from '../store/index.js';
import type { NotificationEndpoint } from './notification-endpoint.js';
import type { Notifier } from './notifier.js';

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
export function notificationRoutes(
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
        return reply.send((await deliveries(e.Id)).map(presentDelivery));
      },
    },
    { events: true },
  );
}

function idOf(req: FastifyRequest): string {
  return (req.params as { id: string }).id;
}
