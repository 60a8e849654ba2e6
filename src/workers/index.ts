/**
 * `--workers N`: the proxy and the matching on N event loops sharing the listening
 * socket; the store, the sending, the API, the tail and the console in one primary process.
 * docs/DECISIONS.md "Using every core: workers". The public surface: whether this process is a
 * worker, and the two entry points the daemon's `main` calls.
 */
import cluster from 'node:cluster';

export { type Primary, runPrimary, startPrimary } from './primary.js';
export { runWorker } from './worker.js';

/** This process is a worker forked by a primary (it must run `runWorker`, not the daemon). */
export const isWorkerProcess = (): boolean => cluster.isWorker;
