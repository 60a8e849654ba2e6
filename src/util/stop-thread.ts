import type { Worker } from 'node:worker_threads';

/**
 * Asks a worker thread to finish (`message`), waits for it to exit for at most `ms`, then ends it.
 * The wait's timer is referenced on purpose: it keeps the loop alive while an unreferenced thread
 * winds down.
 */
export async function stopThread(worker: Worker, message: unknown, ms: number): Promise<void> {
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.postMessage(message);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([exited, deadline]);
  clearTimeout(timer);
  await worker.terminate();
}
