/**
 * The delivery side of the SQLite file with its writes on a thread of their own (writer-main.ts):
 * the process's event loop hands each write over and awaits its commit, and reads on the store's
 * own connection, which WAL lets run beside the writer's transaction. Secrets and credentials are
 * sealed here, before they cross, so the key stays on this thread (decision 0082).
 */
import { Worker } from 'node:worker_threads';
import { stopThread } from '../../util/index.js';
import { singleProcess } from '../delivery-sharing.js';
import type {
  AttemptRecord,
  DeliveryBatch,
  DeliveryQuery,
  DeliveryRecord,
  DeliveryStore,
  HookSecretRecord,
  RequestRewrite,
  RetentionRule,
} from '../delivery-store.js';
import {
  type CredentialRow,
  type CredentialTable,
  hasUserInfo,
  type SecretCodec,
  type StoredSecretRow,
  sealRecord,
  sealUrl,
} from '../secret-codec.js';
import type { SqliteDeliveryStore } from '../sqlite/index.js';
import type { Answer, FromWriter, WireError, WriteOp, WriterSettings } from './wire.js';

const THREAD_URL = new URL('./writer-thread.js', import.meta.url);

/** How long a close waits for the thread to finish what it was given. */
const CLOSE_WAIT_MS = 5000;

interface Waiter {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/** An error of the thread's, as the caller would have had it from the store itself. */
function revive(e: WireError): Error {
  const err = new Error(e.message);
  err.name = e.name;
  if (e.code !== undefined) Object.assign(err, { code: e.code });
  return err;
}

/** A write whose thread stopped before it answered: a store fault, tried again by the caller. */
function writerGone(code: number): Error {
  return Object.assign(new Error(`the SQLite writer thread stopped (exit code ${code})`), {
    code: 'SQLITE_WRITER_GONE',
    storeFault: true,
  });
}

export class SqliteWriterStore implements DeliveryStore, CredentialTable {
  readonly kind = 'sqlite';
  readonly credentialKind = 'url';
  readonly sharing = singleProcess(this);
  readonly #reads: SqliteDeliveryStore;
  readonly #secrets: SecretCodec;
  readonly #settings: WriterSettings;
  #worker: Worker | undefined;
  #next = 1;
  readonly #waiting = new Map<number, Waiter>();
  #closing: Promise<void> | undefined;

  /**
   * @param reads the delivery store on `SqliteStore`'s connection: every read goes through it.
   * @param secrets the codec `reads` opens with, which seals what is written.
   */
  constructor(reads: SqliteDeliveryStore, secrets: SecretCodec, settings: WriterSettings) {
    this.#reads = reads;
    this.#secrets = secrets;
    this.#settings = settings;
    this.#worker = this.#spawn();
  }

  get aggregates(): SqliteDeliveryStore['aggregates'] {
    return this.#reads.aggregates;
  }

  write(batch: DeliveryBatch): Promise<void> {
    // A plain copy: the caller's batch may be a class with bookkeeping of its own.
    const sealed: DeliveryBatch = {
      inserts: batch.inserts.map((r) => this.#sealed(r)),
      updates: batch.updates,
      attempts: batch.attempts,
      deletedHooks: batch.deletedHooks,
    };
    return this.#ask({ op: 'write', batch: sealed }) as Promise<void>;
  }

  putSecret(s: HookSecretRecord): Promise<void> {
    const sealed = sealRecord(this.#secrets, s);
    const secret = { ...s, secret: sealed.secret, previous: sealed.previous };
    return this.#ask({ op: 'putSecret', secret }) as Promise<void>;
  }

  deleteSecret(hookId: string): Promise<boolean> {
    return this.#ask({ op: 'deleteSecret', hookId }) as Promise<boolean>;
  }

  rewriteRequest(rewrite: RequestRewrite): Promise<boolean> {
    return this.#ask({ op: 'rewriteRequest', rewrite }) as Promise<boolean>;
  }

  prune(rule: RetentionRule): Promise<number> {
    return this.#ask({ op: 'prune', rule }) as Promise<number>;
  }

  replaceCredentialRow(row: CredentialRow, text: string): Promise<boolean> {
    return this.#ask({ op: 'replaceCredentialRow', row, text }) as Promise<boolean>;
  }

  replaceStoredSecret(before: StoredSecretRow, next: StoredSecretRow): Promise<boolean> {
    return this.#ask({ op: 'replaceStoredSecret', before, next }) as Promise<boolean>;
  }

  getDelivery(id: string): Promise<DeliveryRecord | undefined> {
    return this.#reads.getDelivery(id);
  }

  listDeliveries(hookId: string, query?: DeliveryQuery): Promise<DeliveryRecord[]> {
    return this.#reads.listDeliveries(hookId, query);
  }

  listAttempts(deliveryId: string): Promise<AttemptRecord[]> {
    return this.#reads.listAttempts(deliveryId);
  }

  pendingDeliveries(): Promise<DeliveryRecord[]> {
    return this.#reads.pendingDeliveries();
  }

  getSecret(hookId: string): Promise<HookSecretRecord | undefined> {
    return this.#reads.getSecret(hookId);
  }

  credentialRows(after: string, limit: number): Promise<CredentialRow[]> {
    return this.#reads.credentialRows(after, limit);
  }

  storedSecrets(after: string, limit: number): Promise<StoredSecretRow[]> {
    return this.#reads.storedSecrets(after, limit);
  }

  /**
   * Ends the thread at once, as a crash would (the chaos tests): the writes it had not answered
   * fail as store faults, which the group commit keeps and tries again; the next write starts a
   * new thread.
   */
  async terminateThread(): Promise<void> {
    await this.#worker?.terminate();
  }

  /** Waits for every write handed over, then stops the thread; the store's connection is its owner's. */
  close(): Promise<void> {
    this.#closing ??= this.#stop();
    return this.#closing;
  }

  async #stop(): Promise<void> {
    const worker = this.#worker;
    if (worker === undefined) return;
    worker.ref();
    await stopThread(worker, { t: 'close' }, CLOSE_WAIT_MS);
  }

  #sealed(r: DeliveryRecord): DeliveryRecord {
    const url = r.request.url;
    if (!hasUserInfo(url)) return r;
    return { ...r, request: { ...r.request, url: sealUrl(this.#secrets, r.hookId, url) } };
  }

  #ask(op: WriteOp): Promise<unknown> {
    if (this.#closing !== undefined) return Promise.reject(new Error('the SQLite writer is closed'));
    if (this.#worker === undefined) this.#worker = this.#spawn();
    const worker = this.#worker;
    const n = this.#next++;
    const answered = new Promise<unknown>((resolve, reject) => {
      this.#waiting.set(n, { resolve, reject });
    });
    // Referenced while a write is out: the process does not end before its commit is known.
    if (this.#waiting.size === 1) worker.ref();
    worker.postMessage({ t: 'ops', ns: [n], ops: [op] });
    return answered;
  }

  #spawn(): Worker {
    const worker = new Worker(THREAD_URL, { workerData: this.#settings, name: 'hookd sqlite writer' });
    worker.unref();
    worker.on('message', (m: FromWriter) => {
      if (m.t === 'done') this.#answered(worker, m.ns, m.answers);
    });
    // The error is the exit's reason; the writes it leaves unanswered fail with the exit.
    worker.on('error', () => undefined);
    worker.once('exit', (code) => this.#exited(worker, code));
    return worker;
  }

  #answered(worker: Worker, ns: number[], answers: Answer[]): void {
    for (let i = 0; i < ns.length; i++) {
      const w = this.#waiting.get(ns[i]!);
      if (w === undefined) continue;
      this.#waiting.delete(ns[i]!);
      const a = answers[i]!;
      if (a.ok) w.resolve(a.value);
      else w.reject(revive(a.error));
    }
    if (this.#waiting.size === 0) worker.unref();
  }

  #exited(worker: Worker, code: number): void {
    if (this.#worker === worker) this.#worker = undefined;
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const w of waiting) w.reject(writerGone(code));
  }
}
