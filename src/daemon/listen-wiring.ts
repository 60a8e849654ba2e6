import type { Logger } from 'pino';
import type { TailFanout } from '../cluster/index.js';
import type { DeliveryPipeline } from '../delivery/index.js';
import type { assembleIdentity } from '../identity/index.js';
import { ListenServer, presentListenerAttempt } from '../listen/index.js';
import type { TailServer, UpgradeHandler } from '../server/index.js';
import type { HookService } from '../service/index.js';
import type { OpenedStores } from './open-store.js';

/**
 * `hookctl listen`'s socket as the daemon runs it: fed by the pipeline's `fired` events
 * (no call site inside the pipeline), answering upgrades to `/_hookd/listen` and handing the
 * others to the tail, and giving the delivery log its listener attempts.
 */
export function listenServer(parts: {
  identity: ReturnType<typeof assembleIdentity>;
  settings: { readonly eventsEnabled: boolean };
  log: Logger;
  deliveries: DeliveryPipeline;
  hooks: HookService;
  opened: OpenedStores;
  tail: TailServer;
  /** In a cluster: the other instances' fired callbacks reach this instance's listeners too. */
  fanout?: TailFanout | undefined;
}): {
  upgrade: UpgradeHandler;
  attemptsOf: (deliveryId: string) => Promise<Record<string, unknown>[]>;
  close: () => Promise<void>;
  terminate: () => void;
} {
  const { deliveries, hooks, opened, tail } = parts;
  const server = new ListenServer({
    auth: parts.identity.api,
    eventsEnabled: () => parts.settings.eventsEnabled,
    log: parts.log,
    events: deliveries.events,
    deliveries,
    hooks,
    attempts: opened.listenerAttempts,
    ...(parts.fanout && { remote: parts.fanout }),
  });
  return {
    upgrade: (req, socket, head) =>
      ListenServer.handles(req.url)
        ? server.handleUpgrade(req, socket, head)
        : tail.handleUpgrade(req, socket, head),
    attemptsOf: async (id) => (await opened.listenerAttempts.list(id)).map(presentListenerAttempt),
    close: () => server.close(),
    terminate: () => server.terminate(),
  };
}
