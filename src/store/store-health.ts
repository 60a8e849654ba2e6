import { describeStoreFault } from './store-fault.js';

/** Seconds a client is told to wait (`Retry-After`) while the store refuses writes. */
export const STORE_RETRY_AFTER_S = 5;

export interface StoreFaultState {
  /** Since when (epoch ms). */
  since: number;
  /** The last refusal, described. */
  error: string;
  /** Which parts saw it: `api`, `deliveries`, `deliveries (memory)`, … */
  sources: string[];
}

/**
 * Whether the store takes writes: set down by any part that had a write refused with a store fault
 * (the API, the delivery outbox), and up again by that part's next successful write. While it is
 * down, `/readyz` answers 503, and a probe write runs every few seconds so that readiness comes
 * back even when nothing else writes.
 */
export class StoreHealth {
  private readonly faults = new Map<string, { since: number; error: string }>();
  private probeTimer: NodeJS.Timeout | undefined;
  private readonly listeners: ((available: boolean) => void)[] = [];
  /** Faults seen since start (a write refused with the store available before). */
  faultCount = 0;

  constructor(
    /** A small real write (and its undoing), run while the store is down; undefined: no probe. */
    private readonly probe?: () => Promise<void>,
    private readonly probeIntervalMs = 2000,
    private readonly onLog?: (available: boolean, state: StoreFaultState | undefined) => void,
  ) {}

  get available(): boolean {
    return this.faults.size === 0;
  }

  /** What is wrong, or undefined while the store is available. */
  get state(): StoreFaultState | undefined {
    if (this.faults.size === 0) return undefined;
    let since = Number.POSITIVE_INFINITY;
    let error = '';
    for (const f of this.faults.values()) {
      if (f.since < since) since = f.since;
      error = f.error;
    }
    return { since, error, sources: [...this.faults.keys()] };
  }

  onChange(listener: (available: boolean) => void): void {
    this.listeners.push(listener);
  }

  /** `source` had a write refused with a store fault. */
  fault(source: string, err: unknown): void {
    const was = this.available;
    const existing = this.faults.get(source);
    const error = describeStoreFault(err);
    if (existing) existing.error = error;
    else this.faults.set(source, { since: Date.now(), error });
    if (was) {
      this.faultCount++;
      this.changed(false);
      this.armProbe();
    }
  }

  /** `source` wrote successfully. */
  ok(source: string): void {
    if (!this.faults.delete(source)) return;
    if (this.available) {
      this.disarmProbe();
      this.changed(true);
    }
  }

  stop(): void {
    this.disarmProbe();
  }

  private changed(available: boolean): void {
    this.onLog?.(available, this.state);
    for (const l of this.listeners) l(available);
  }

  private armProbe(): void {
    if (!this.probe || this.probeTimer) return;
    this.probeTimer = setInterval(() => {
      // Only the API's fault is cleared by the probe; the outbox clears its own by writing.
      if (!this.faults.has('api')) return;
      this.probe!().then(
        () => this.ok('api'),
        (err: unknown) => {
          const f = this.faults.get('api');
          if (f) f.error = describeStoreFault(err);
        },
      );
    }, this.probeIntervalMs);
    this.probeTimer.unref();
  }

  private disarmProbe(): void {
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = undefined;
  }
}
