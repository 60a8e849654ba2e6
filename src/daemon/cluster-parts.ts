/**
 * The parts a hookd on a shared PostgreSQL database adds: its membership and lease,
 * the reclaimer that adopts the deliveries of instances gone, and the live tail's fan-out. Each
 * registers its stop where it is made.
 */
import type { Logger } from 'pino';
import { ClusterMember, Reclaimer, TailFanout } from '../cluster/index.js';
import type { DeliveryPipeline } from '../delivery/index.js';
import type { Lifecycle } from './lifecycle.js';
import type { OpenedStores } from './open-store.js';

type Cluster = NonNullable<OpenedStores['cluster']>;

/**
 * Where a lost lease is told. The membership is joined before the pipeline exists (instances
 * starting together take turns through it); the pipeline, made later, says how it lets go.
 */
export class LeaseLoss {
  #release: (() => number) | undefined;

  /** What lets go of the pending deliveries not being attempted; returns how many. */
  releaseWith(release: () => number): void {
    this.#release = release;
  }

  /** The lease is lost: how many pending deliveries were let go. */
  lost(): number {
    return this.#release?.() ?? 0;
  }
}

/**
 * Joins the cluster; a lost lease is told to `loss`. Stopping
 * lets go of what is still pending, so that the other instances take it over at once rather than
 * after the lease runs out, then leaves.
 */
export async function joinCluster(
  opened: OpenedStores,
  leaseMs: number,
  loss: LeaseLoss,
  log: Logger,
  life: Lifecycle,
): Promise<ClusterMember | undefined> {
  const cluster = opened.cluster;
  if (!cluster) return undefined;
  const member = new ClusterMember({
    db: cluster.db,
    lease: cluster.lease,
    leaseMs,
    log,
    onLeaseLost: () => {
      const released = loss.lost();
      log.warn({ released }, 'cluster: pending deliveries let go (other instances take them over)');
    },
  });
  life.defer('cluster membership', async () => {
    const released = await Promise.all(
      [opened.deliveries.durable, opened.deliveries.ephemeral].map((d) =>
        d.sharing.release().catch((err: Error) => {
          log.warn({ err: err.message }, 'cluster: letting go of pending deliveries failed');
          return 0;
        }),
      ),
    );
    const n = released[0]! + released[1]!;
    if (n > 0) log.info({ deliveries: n }, 'cluster: pending deliveries handed to the other instances');
    await member.leave();
  });
  await member.join();
  return member;
}

/** Adopts the pending deliveries of instances whose lease ran out. */
export function startReclaimer(
  cluster: Cluster | undefined,
  opened: OpenedStores,
  deliveries: DeliveryPipeline,
  leaseMs: number,
  log: Logger,
  life: Lifecycle,
): void {
  if (!cluster) return;
  const reclaimer = new Reclaimer({
    db: cluster.db,
    stores: [
      { store: opened.deliveries.durable, persist: true },
      { store: opened.deliveries.ephemeral, persist: false },
    ],
    adopt: (records, persist) => deliveries.adopt(records, persist),
    intervalMs: Math.min(1000, Math.max(100, Math.floor(leaseMs / 4))),
    log,
  });
  reclaimer.start();
  life.defer('reclaimer', () => reclaimer.stop());
}

/**
 * The live tail sees this instance's events and, in a cluster, those of the others: this
 * instance publishes its events only while some instance's tail client wants them.
 */
export async function startTailFanout(
  cluster: Cluster | undefined,
  deliveries: DeliveryPipeline,
  log: Logger,
  life: Lifecycle,
): Promise<TailFanout | undefined> {
  if (!cluster) return undefined;
  const fanout = new TailFanout({ db: cluster.db, log });
  let offPublish: (() => void) | undefined;
  fanout.onDemand((wanted) => {
    if (wanted && !offPublish) {
      const offFired = deliveries.events.on('fired', (m, owner) => fanout.publish({ ...m, owner }));
      const offAttempt = deliveries.events.on('attempt', (m, owner) => fanout.publish({ ...m, owner }));
      offPublish = () => {
        offFired();
        offAttempt();
      };
    } else if (!wanted && offPublish) {
      offPublish();
      offPublish = undefined;
    }
  });
  life.defer('tail fan-out', () => fanout.stop());
  await fanout.start();
  return fanout;
}
