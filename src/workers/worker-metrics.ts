import { AggregatorRegistry } from 'prom-client';
import type { MetricsSnapshot } from '../observability/index.js';

/** A worker that has not answered by then is counted with its last answer. */
const ANSWER_MS = 1000;
const COMPACT_AT = 16;

/**
 * The primary's side of the workers' metrics (docs/DECISIONS.md "Metrics with workers"): at every
 * scrape each live worker is asked for its registry's snapshot. Counters must never go down, so
 * what a worker counted is kept when it dies: its last snapshot's counters and histograms are
 * kept in `departed` (what it counted after its last answer is lost with it).
 */
export class WorkerMetrics {
  private asked = 0;
  private readonly last = new Map<number, MetricsSnapshot>();
  private readonly waiting = new Map<number, { left: Set<number>; done: () => void }>();
  /** The cumulative part of each departed worker's last answer; compacted now and then. */
  private readonly departed: MetricsSnapshot[] = [];
  private compacting = false;

  constructor(private readonly ask: (worker: number, id: number) => void) {}

  /** Every live worker's snapshot (fresh, or the last one within ANSWER_MS), and the departed's. */
  async gather(workers: number[]): Promise<MetricsSnapshot[]> {
    const id = ++this.asked;
    const left = new Set(workers);
    if (left.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => finish(), ANSWER_MS);
        const finish = () => {
          clearTimeout(timer);
          this.waiting.delete(id);
          resolve();
        };
        this.waiting.set(id, { left, done: finish });
        for (const w of workers) this.ask(w, id);
      });
    }
    const out = [...this.departed];
    for (const w of workers) {
      const s = this.last.get(w);
      if (s) out.push(s);
    }
    return out;
  }

  answered(worker: number, id: number, snapshot: MetricsSnapshot): void {
    this.last.set(worker, snapshot);
    const w = this.waiting.get(id);
    if (!w) return;
    w.left.delete(worker);
    if (w.left.size === 0) w.done();
  }

  /** A worker exited: keep what it counted (at once, so that no scrape misses it). */
  exited(worker: number): void {
    const s = this.last.get(worker);
    this.last.delete(worker);
    for (const w of this.waiting.values()) {
      w.left.delete(worker);
      if (w.left.size === 0) w.done();
    }
    if (!s) return;
    this.departed.push(s.filter((m) => String(m.type) === 'counter' || String(m.type) === 'histogram'));
    if (this.departed.length >= COMPACT_AT && !this.compacting) void this.compact();
  }

  /** A crash loop must not grow the scrape: the departed are summed into one snapshot. */
  private async compact(): Promise<void> {
    this.compacting = true;
    const n = this.departed.length;
    try {
      const merged = await AggregatorRegistry.aggregate(this.departed.slice(0, n)).getMetricsAsJSON();
      // Only pushes happen meanwhile: the first n are still the ones merged.
      this.departed.splice(0, n, merged);
    } finally {
      this.compacting = false;
    }
  }
}
