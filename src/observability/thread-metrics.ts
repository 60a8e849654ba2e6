import { Counter, Gauge, type Registry } from 'prom-client';

/** What the delivery threads' metrics read at scrape time (src/executors/ `stats`). */
export interface ThreadMetricsSource {
  stats(): {
    running: number;
    threads: readonly { attempts: number; busySeconds: number }[];
  };
}

/**
 * The delivery threads: how many run, and per thread (its place, `0` to N-1, kept by the thread
 * that replaces one that died) the attempts it was given and the time its event loop was busy.
 */
export function registerThreadMetrics(registry: Registry, source: ThreadMetricsSource): void {
  const registers = [registry];
  new Gauge({
    name: 'hookd_delivery_threads',
    help: 'Delivery threads running (0: the core loop sends the callbacks itself)',
    registers,
    collect() {
      this.set(source.stats().running);
    },
  });
  new Counter({
    name: 'hookd_delivery_thread_attempts_total',
    help: 'Callback attempts handed to each delivery thread',
    labelNames: ['thread'],
    registers,
    collect() {
      this.reset();
      for (const [i, t] of source.stats().threads.entries()) this.inc({ thread: String(i) }, t.attempts);
    },
  });
  new Counter({
    name: 'hookd_delivery_thread_busy_seconds_total',
    help: "Seconds each delivery thread's event loop was busy (sending, reading answers)",
    labelNames: ['thread'],
    registers,
    collect() {
      this.reset();
      for (const [i, t] of source.stats().threads.entries()) this.inc({ thread: String(i) }, t.busySeconds);
    },
  });
}
