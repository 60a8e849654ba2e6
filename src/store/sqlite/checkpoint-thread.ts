/**
 * The checkpointer's thread: its own connection to the file, a checkpoint every interval, a word
 * to the writing connection when the WAL is past its bound, and a last checkpoint when asked to stop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { checkpointWal } from './wal-checkpoint.js';

const port = parentPort;
if (port === null) throw new Error('checkpoint-thread.js runs in a worker thread');
const { file, intervalMs, boundPages } = workerData as {
  file: string;
  intervalMs: number;
  boundPages: number;
};
const db = new Database(file);
db.pragma('busy_timeout = 1000');
const tick = (): number => {
  try {
    return checkpointWal(db);
  } catch {
    // A busy or locked file is tried again at the next interval.
    return 0;
  }
};
const timer = setInterval(() => {
  if (tick() > boundPages) port.postMessage('behind');
}, intervalMs);
port.on('message', () => {
  clearInterval(timer);
  tick();
  db.close();
  port.close();
});
