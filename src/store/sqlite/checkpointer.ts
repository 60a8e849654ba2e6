import { Worker } from 'node:worker_threads';
import { stopThread } from '../../util/index.js';
import { WAL_BOUND_PAGES } from './wal-checkpoint.js';

const THREAD_URL = new URL('./checkpoint-thread.js', import.meta.url);

/**
 * WAL checkpoints off the main thread. SQLite's automatic checkpoint runs inside whichever commit
 * crosses the threshold, on the event loop, and measured as the p99 of delivery batches (4.3 ms,
 * max 15 ms, against 0.35 ms without it). Here a thread with its own connection runs a PASSIVE
 * checkpoint every interval, which never blocks the loop's writes. When the WAL is past
 * `boundPages` all the same (writes that never pause, wal-checkpoint.ts), `behind` is called: the
 * writing connection checkpoints itself, copying only what the thread has not yet.
 */
export class Checkpointer {
  private readonly worker: Worker;

  constructor(file: string, behind: () => void, intervalMs = 1000, boundPages = WAL_BOUND_PAGES) {
    this.worker = new Worker(THREAD_URL, {
      workerData: { file, intervalMs, boundPages },
      name: 'hookd sqlite checkpointer',
    });
    this.worker.on('message', behind);
    this.worker.unref();
  }

  stop(): Promise<void> {
    return stopThread(this.worker, 'stop', 2000);
  }
}
