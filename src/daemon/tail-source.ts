import type { TailFanout } from '../cluster/index.js';
import type { DeliveryPipeline } from '../delivery/index.js';
import type { TailEvent, TailSource } from '../server/index.js';

/**
 * Where the live tail's events come from: this instance's fired callbacks and attempts, and in a
 * cluster the other instances' (asked for only while someone watches that owner).
 */
export function tailSource(deliveries: DeliveryPipeline, fanout: TailFanout | undefined): TailSource {
  return {
    subscribe: (listener, filter) => {
      const offFired = deliveries.events.on('fired', (m, owner) => listener({ ...m, owner }));
      const offAttempt = deliveries.events.on('attempt', (m, owner) => listener({ ...m, owner }));
      const offRemote = fanout?.onRemote((e) => listener(e as TailEvent));
      if (filter) fanout?.watching(filter.owner, 1);
      return () => {
        offFired();
        offAttempt();
        offRemote?.();
        if (filter) fanout?.watching(filter.owner, -1);
      };
    },
  };
}
