/**
 * The SQLite writer thread: one connection that makes every write of the delivery side, so that no
 * event loop that sends waits on SQL. It runs what the process's store hands it in the order it was
 * asked, one transaction per batch (the group commit gathers a batch while the last is written),
 * and answers each by its number. Reads stay on the store's own connection (WAL lets them run
 * beside a write).
 */

import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { PLAIN_SECRETS } from '../secret-codec.js';
import { checkpointWal, SqliteDeliveryStore, WAL_SIZE_LIMIT_BYTES } from '../sqlite/index.js';
import type { Answer, FromWriter, ToWriter, WireError, WriteOp, WriterSettings } from './wire.js';

const port = parentPort;
if (port === null) throw new Error('writer-main.js runs in the SQLite writer thread');
const settings = workerData as WriterSettings;
const post = (m: FromWriter): void => port.postMessage(m);

const db = new Database(settings.file);
db.pragma(`synchronous = ${settings.synchronous}`);
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
// What reaches this thread is sealed already: the store writes it as it is.
const store = new SqliteDeliveryStore(db, PLAIN_SECRETS);

function run(o: WriteOp): Promise<unknown> {
  switch (o.op) {
    case 'write':
      return store.write(o.batch);
    case 'putSecret':
      return store.putSecret(o.secret);
    case 'deleteSecret':
      return store.deleteSecret(o.hookId);
    case 'rewriteRequest':
      return store.rewriteRequest(o.rewrite);
    case 'prune':
      return store.prune(o.rule);
    case 'replaceCredentialRow':
      return store.replaceCredentialRow(o.row, o.text);
    case 'replaceStoredSecret':
      return store.replaceStoredSecret(o.before, o.next);
  }
}

function wire(err: unknown): WireError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const code = (err as { code?: unknown }).code;
  return { name: err.name, message: err.message, ...(typeof code === 'string' && { code }) };
}

async function answer(ns: number[], ops: WriteOp[]): Promise<void> {
  const answers: Answer[] = [];
  for (const o of ops) {
    try {
      answers.push({ ok: true, value: await run(o) });
    } catch (err) {
      answers.push({ ok: false, error: wire(err) });
    }
  }
  post({ t: 'done', ns, answers });
}

// A message's writes finish before the next message's begin: the order is the store's.
let queue: Promise<void> = Promise.resolve();

// The checkpoint is queued like a write: it runs between two batches, never beside one.
let checkpoints: NodeJS.Timeout | undefined;
if (settings.checkpointMs !== undefined) {
  db.pragma('wal_autocheckpoint = 0');
  checkpoints = setInterval(() => {
    queue = queue.then(() => {
      try {
        checkpointWal(db);
      } catch {
        // A reader's lock or a busy file: the next interval tries again.
      }
    });
  }, settings.checkpointMs);
}
port.on('message', (m: ToWriter) => {
  if (m.t === 'ops') {
    queue = queue.then(() => answer(m.ns, m.ops));
    return;
  }
  clearInterval(checkpoints);
  queue = queue.then(() => {
    db.close();
    post({ t: 'closed' });
    port.close();
  });
});
