import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Hookd } from '../daemon/index.js';
import type { Hook } from '../hook/index.js';
import { CHUNK, type FromWorker, type ToWorker } from './messages.js';
import { WorkerMetrics } from './worker-metrics.js';

interface Entry {
  worker: Worker;
  /** The last sequence number it applied. */
  applied: number;
  startedAt: number;
  url?: string;
  /** Its message listener is in place: it can be asked. */
  hello?: boolean;
}

/** A worker that dies sooner than this after its start counts as a crash loop: the next waits longer. */
const QUICK_DEATH_MS = 5000;
const MAX_DELAY_MS = 10_000;

/**
 * The primary's side of the workers: forks them, keeps each one's copy of the hook index in step
 * with the primary's engine, records what they fire, answers their questions, replaces the ones
 * that die. docs/DECISIONS.md "Using every core: workers".
 */
export class WorkerHub {
  private seq = 0;
  private readonly entries = new Map<number, Entry>();
  private barriers: { target: number; resolve: () => void }[] = [];
  private stopping = false;
  private delayMs = 0;
  private listeningWaiters: (() => void)[] = [];
  /** Set when a worker of the first start died before it listened: the start fails. */
  private startFailure: Error | undefined;
  private started = false;
  /** Workers started again after one died (`hookd_worker_restarts_total`). */
  restarts = 0;
  private readonly metrics = new WorkerMetrics((id, n) => {
    const e = this.entries.get(id);
    if (e) this.post(e.worker, { t: 'metrics', id: n });
  });

  constructor(
    private readonly opts: {
      count: number;
      hookd: Hookd;
      env: Record<string, string>;
      log: Logger;
      /** A passed-on `POST …/reload` succeeded: reload this process, then every worker. */
      reloadAll: () => void;
    },
  ) {}

  /** Makes every change of the primary's engine reach every worker, numbered. */
  follow(): void {
    this.opts.hookd.engine.changes.observe({
      saved: (hook: Hook) => this.broadcast({ t: 'saved', seq: ++this.seq, hook }),
      deleted: (id: string) => this.broadcast({ t: 'deleted', seq: ++this.seq, id }),
      loaded: () => {
        this.seq++;
        for (const e of this.entries.values()) this.sendSet(e.worker);
      },
    });
  }

  start(): void {
    for (let i = 0; i < this.opts.count; i++) this.fork();
  }

  /** Resolves once every worker listens; the public URL (the same for all). */
  async listening(): Promise<string> {
    while ([...this.entries.values()].some((e) => e.url === undefined)) {
      if (this.startFailure) throw this.startFailure;
      await new Promise<void>((r) => this.listeningWaiters.push(r));
    }
    if (this.startFailure) throw this.startFailure;
    this.started = true;
    return [...this.entries.values()][0]?.url ?? '';
  }

  /** Every worker's metrics, for the primary's /metrics (worker-metrics.ts). */
  gatherMetrics(): ReturnType<WorkerMetrics['gather']> {
    return this.metrics.gather([...this.entries].filter(([, e]) => e.hello).map(([id]) => id));
  }

  get size(): number {
    return this.entries.size;
  }

  broadcast(m: ToWorker): void {
    for (const e of this.entries.values()) this.post(e.worker, m);
  }

  private post(w: Worker, m: ToWorker): void {
    if (w.isConnected()) w.send(m);
  }

  /** The whole hook set, in chunks, then `set`: what a new worker starts from, or a resync. */
  private sendSet(w: Worker): void {
    const engine = this.opts.hookd.engine;
    let chunk: Hook[] = [];
    for (const id of engine.ids()) {
      const h = engine.get(id);
      if (h === undefined) continue;
      chunk.push(h);
      if (chunk.length === CHUNK) {
        this.post(w, { t: 'hooks', hooks: chunk });
        chunk = [];
      }
    }
    if (chunk.length > 0) this.post(w, { t: 'hooks', hooks: chunk });
    this.post(w, { t: 'set', seq: this.seq });
  }

  private fork(): void {
    const worker = cluster.fork(this.opts.env);
    const entry: Entry = { worker, applied: 0, startedAt: Date.now() };
    this.entries.set(worker.id, entry);
    worker.on('message', (m: FromWorker) => this.onMessage(entry, m));
    worker.on('exit', (code, signal) => {
      this.entries.delete(worker.id);
      this.metrics.exited(worker.id);
      this.checkBarriers();
      if (!this.started && entry.url === undefined) {
        this.stopping = true;
        this.startFailure ??= new Error(
          `a worker could not start (exit code ${code ?? signal}); its error is above`,
        );
      }
      for (const r of this.listeningWaiters.splice(0)) r();
      if (this.stopping) return;
      const quick = Date.now() - entry.startedAt < QUICK_DEATH_MS;
      this.delayMs = quick ? Math.min(MAX_DELAY_MS, Math.max(100, this.delayMs * 2)) : 0;
      this.opts.log.error(
        { worker: worker.process.pid, code, signal, restartInMs: this.delayMs },
        'worker died: starting another',
      );
      setTimeout(() => {
        if (this.stopping) return;
        this.restarts++;
        this.fork();
      }, this.delayMs).unref();
    });
  }

  private onMessage(entry: Entry, m: FromWorker): void {
    const { hookd, log } = this.opts;
    switch (m.t) {
      case 'hello':
        entry.hello = true;
        this.sendSet(entry.worker);
        return;
      case 'metrics':
        this.metrics.answered(entry.worker.id, m.id, m.metrics);
        return;
      case 'listening':
        entry.url = m.url;
        for (const r of this.listeningWaiters.splice(0)) r();
        return;
      case 'applied':
        entry.applied = Math.max(entry.applied, m.seq);
        this.checkBarriers();
        return;
      case 'fired': {
        hookd.deliveries.accept(m.events);
        const n = m.n;
        hookd.deliveries.settled().then(
          () => this.post(entry.worker, { t: 'ack', n }),
          (err: unknown) => log.error({ err }, 'recording callbacks fired by a worker failed'),
        );
        return;
      }
      case 'reload-all':
        this.opts.reloadAll();
        return;
      case 'ask': {
        const reply = (p: Promise<unknown>) =>
          p.then(
            (value) => this.post(entry.worker, { t: 'reply', id: m.id, value }),
            (err: unknown) => this.post(entry.worker, { t: 'reply', id: m.id, error: String(err) }),
          );
        if (m.what === 'getUser') return void reply(hookd.store.getUser(m.name));
        if (m.what === 'listUsers') return void reply(hookd.store.listUsers());
        // A mutating API request was answered: users may have changed too.
        this.broadcast({ t: 'users', seq: ++this.seq });
        return void reply(this.barrier());
      }
    }
  }

  /** Resolves once every live worker has applied every change sent so far. */
  barrier(): Promise<void> {
    const target = this.seq;
    return new Promise((resolve) => {
      this.barriers.push({ target, resolve });
      this.checkBarriers();
    });
  }

  private checkBarriers(): void {
    if (this.barriers.length === 0) return;
    let low = Number.POSITIVE_INFINITY;
    for (const e of this.entries.values()) low = Math.min(low, e.applied);
    const still: typeof this.barriers = [];
    for (const b of this.barriers) {
      if (b.target <= low) b.resolve();
      else still.push(b);
    }
    this.barriers = still;
  }

  /** Tells every worker to drain and stop; resolves once all have exited (or after the deadline). */
  async stop(deadlineMs: number): Promise<void> {
    this.stopping = true;
    const exits = [...this.entries.values()].map(
      (e) => new Promise<void>((r) => (e.worker.isDead() ? r() : e.worker.once('exit', () => r()))),
    );
    this.broadcast({ t: 'stop' });
    const timer = setTimeout(() => {
      for (const e of this.entries.values()) e.worker.process.kill('SIGKILL');
    }, deadlineMs + 2000);
    timer.unref();
    await Promise.all(exits);
    clearTimeout(timer);
  }
}
