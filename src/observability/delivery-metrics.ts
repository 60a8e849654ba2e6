import { Counter, Gauge, type Registry } from 'prom-client';
import { HOLD_KINDS, type HoldKind } from '../delivery/index.js';
import type { StoreHealth } from '../store/index.js';

/** What the delivery metrics read at scrape time (the pipeline's `stats` and `waitingByHost`). */
export interface DeliveryMetricsSource {
  stats(): { buffered: number; dropped: number; heldBack: Readonly<Record<HoldKind, number>> };
  waitingByHost(): Iterable<{ host: string; waiting: number }>;
  /** Ordered delivery per key (src/ordering/); absent: no ordering metrics. */
  orderingStats?(): { heldKeys: number; held: number; heldTotal: number };
  /** Endpoint verification (src/verification/): callback origins per verification state. */
  readonly verifier?: { counts(): Record<'verified' | 'unverified', number> } | undefined;
  /** Each receiver's adaptive concurrency limit (src/pace/); absent: no such metric. */
  readonly pace?: { limits(): Iterable<{ receiver: string; limit: number }> };
}

/**
 * The delivery metrics: which key held attempts back (per endpoint, per host, global, or an
 * open circuit of either), what waits per host, the store-fault buffer (deliveries not yet
 * durable, callbacks dropped because it was full) and whether the store takes writes.
 */
export function registerDeliveryMetrics(
  registry: Registry,
  source: DeliveryMetricsSource,
  health: StoreHealth,
): void {
  const registers = [registry];
  new Counter({
    name: 'hookd_delivery_held_back_total',
    help: 'Callback attempts held back, by what held them: endpoint or host limit, global limit, endpoint_circuit or host_circuit (open breaker)',
    labelNames: ['by'],
    registers,
    collect() {
      this.reset();
      const held = source.stats().heldBack;
      for (const kind of HOLD_KINDS) this.inc({ by: kind }, held[kind]);
    },
  });
  // Endpoint verification.
  if (source.verifier) {
    const verifier = source.verifier;
    new Gauge({
      name: 'hookd_endpoint_verification_origins',
      help: 'Callback origins asked by the CloudEvents validation handshake, by state: verified, or unverified (not yet, or refused)',
      labelNames: ['state'],
      registers,
      collect() {
        const c = verifier.counts();
        this.set({ state: 'verified' }, c.verified);
        this.set({ state: 'unverified' }, c.unverified);
      },
    });
  }
  // Ordered delivery per key.
  const ordering = source.orderingStats?.bind(source);
  if (ordering) {
    new Gauge({
      name: 'hookd_ordering_held_keys',
      help: 'Ordering keys with deliveries held back behind their head (a failing or in-flight delivery)',
      registers,
      collect() {
        this.set(ordering().heldKeys);
      },
    });
    new Gauge({
      name: 'hookd_ordering_held_deliveries',
      help: 'Deliveries held back behind the head of their ordering key',
      registers,
      collect() {
        this.set(ordering().held);
      },
    });
  }
  new Gauge({
    name: 'hookd_delivery_waiting',
    help: 'Callback attempts due and waiting for a slot, per host (scheme://host:port)',
    labelNames: ['host'],
    registers,
    collect() {
      this.reset();
      for (const w of source.waitingByHost()) this.set({ host: w.host }, w.waiting);
    },
  });
  const pace = source.pace;
  if (pace) {
    new Gauge({
      name: 'hookd_receiver_concurrency_limit',
      help: 'Attempts one endpoint of a receiver may have in flight now: learned from its answers (adaptive concurrency), at most --delivery-per-endpoint',
      labelNames: ['receiver'],
      registers,
      collect() {
        this.reset();
        for (const p of pace.limits()) this.set({ receiver: p.receiver }, p.limit);
      },
    });
  }
  new Gauge({
    name: 'hookd_delivery_buffered',
    help: 'Deliveries held in memory only because the store refuses writes (not yet durable)',
    registers,
    collect() {
      this.set(source.stats().buffered);
    },
  });
  new Counter({
    name: 'hookd_delivery_buffer_dropped_total',
    help: 'Fired callbacks dropped because the store refused writes and the buffer was full',
    registers,
    collect() {
      this.reset();
      this.inc(source.stats().dropped);
    },
  });
  new Gauge({
    name: 'hookd_store_available',
    help: '1 while the store takes writes, 0 while it refuses them (disk full, read-only, database down)',
    registers,
    collect() {
      this.set(health.available ? 1 : 0);
    },
  });
  new Counter({
    name: 'hookd_store_faults_total',
    help: 'Times the store began refusing writes',
    registers,
    collect() {
      this.reset();
      this.inc(health.faultCount);
    },
  });
}
