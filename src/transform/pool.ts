/**
 * The threads transforms run in. One job per thread at a time; a thread that does not answer
 * well after the time limit (the interrupt handler failed to stop a run) is terminated and
 * replaced, and its run fails as timed out. Threads are made on first use and do not keep the
 * process alive.
 */
import { Worker } from 'node:worker_threads';
import type { TransformLimits } from './limits.js';
import type { SandboxResult } from './sandbox.js';
import type { WorkerJob } from './transform-worker.js';

interface Job {
  source: string;
  input: string;
  resolve: (r: SandboxResult) => void;
}

interface Slot {
  worker: Worker;
  /** The thread has loaded QuickJS: jobs go to it from now on. */
  ready: boolean;
  busy?: { id: number; job: Job; timer: NodeJS.Timeout };
}

const WORKER_URL = new URL('./transform-worker.js', import.meta.url);

export class TransformPool {
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  #next = 1;
  #closed = false;

  constructor(
    private readonly limits: TransformLimits,
    private readonly size = 1,
  ) {}

  run(source: string, input: string): Promise<SandboxResult> {
    if (this.#closed) return Promise.resolve({ ok: false, error: 'hookd is shutting down' });
    return new Promise((resolve) => {
      this.#queue.push({ source, input, resolve });
      this.#pump();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const j of this.#queue.splice(0)) j.resolve({ ok: false, error: 'hookd is shutting down' });
    await Promise.all(this.#slots.splice(0).map((s) => s.worker.terminate()));
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      const slot = this.#slots.find((s) => s.ready && s.busy === undefined);
      if (slot === undefined) {
        if (this.#slots.length < this.size) this.#spawn();
        return;
      }
      this.#start(slot, this.#queue.shift()!);
    }
  }

  #spawn(): Slot {
    const worker = new Worker(WORKER_URL, {
      // The sandbox's heap is WebAssembly memory; Node's own heap here holds only messages.
      resourceLimits: { maxOldGenerationSizeMb: 64 + Math.ceil((this.limits.outputBytes * 4) / 2 ** 20) },
    });
    worker.unref();
    const slot: Slot = { worker, ready: false };
    worker.on('message', (m: { id: number; result: SandboxResult } | { ready: true }) => {
      if ('ready' in m) {
        slot.ready = true;
        this.#pump();
        return;
      }
      const busy = slot.busy;
      if (busy === undefined || busy.id !== m.id) return;
      clearTimeout(busy.timer);
      slot.busy = undefined;
      busy.job.resolve(m.result);
      this.#pump();
    });
    const gone = (why: string): void => {
      const i = this.#slots.indexOf(slot);
      if (i === -1) return;
      this.#slots.splice(i, 1);
      const busy = slot.busy;
      slot.busy = undefined;
      if (busy !== undefined) {
        clearTimeout(busy.timer);
        busy.job.resolve({ ok: false, error: why });
      }
      this.#pump();
    };
    worker.on('error', (err) => gone(`the sandbox failed: ${err.message}`));
    worker.on('exit', () => gone('the sandbox stopped'));
    this.#slots.push(slot);
    return slot;
  }

  #start(slot: Slot, job: Job): void {
    const id = this.#next++;
    // Generous: the interrupt handler stops a run at the limit; this catches one it could not.
    const timer = setTimeout(
      () => {
        const busy = slot.busy;
        if (busy?.id !== id) return;
        slot.busy = undefined;
        const i = this.#slots.indexOf(slot);
        if (i !== -1) this.#slots.splice(i, 1);
        void slot.worker.terminate();
        job.resolve({ ok: false, error: `exceeded ${this.limits.timeMs} ms` });
        this.#pump();
      },
      this.limits.timeMs * 10 + 1000,
    );
    timer.unref();
    slot.busy = { id, job, timer };
    const msg: WorkerJob = { id, source: job.source, input: job.input, limits: this.limits };
    slot.worker.postMessage(msg);
  }
}
