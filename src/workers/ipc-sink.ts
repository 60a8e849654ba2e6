import type { FiredEvent, FiredEventSink } from '../engine/index.js';
import type { FromWorker } from './messages.js';

/**
 * A worker's delivery: fired callbacks go to the primary, one numbered message per event-loop
 * turn, and `recorded()` resolves once the primary has acknowledged every batch sent so far as
 * recorded (its pipeline's `settled()`). The proxy holds the end of an AfterCompletion response on
 * it, as in one process.
 */
export class IpcSink implements FiredEventSink {
  private pending: FiredEvent[] = [];
  private scheduled = false;
  private sent = 0;
  private acked = 0;
  private waiters: { n: number; resolve: () => void }[] = [];

  constructor(private readonly send: (m: FromWorker) => void) {}

  accept(events: FiredEvent[]): void {
    for (const e of events) this.pending.push(e);
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate, not a microtask: the callbacks of every request handled in this turn go together.
    setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const events = this.pending;
    this.pending = [];
    this.send({ t: 'fired', n: ++this.sent, events });
  };

  /** Resolves once everything accepted so far is recorded by the primary. */
  recorded(): Promise<void> {
    const n = this.sent + (this.pending.length > 0 ? 1 : 0);
    if (n <= this.acked) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  acknowledged(n: number): void {
    if (n <= this.acked) return;
    this.acked = n;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (w.n <= n) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }

  /** Batches sent and not yet acknowledged, plus the one being gathered. */
  get unacknowledged(): number {
    return this.sent - this.acked + (this.pending.length > 0 ? 1 : 0);
  }
}
