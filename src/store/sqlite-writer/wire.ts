/**
 * The messages between the SQLite writer thread and the process's store: plain data only, so
 * that they cross the thread boundary as they are. Secrets and credentials in them are already
 * sealed; the key never leaves the thread that owns it.
 */
import type { DeliveryBatch, HookSecretRecord, RequestRewrite, RetentionRule } from '../delivery-store.js';
import type { CredentialRow, StoredSecretRow } from '../secret-codec.js';

/** What the writer thread opens: the file `SqliteStore` has already migrated, with its settings. */
export interface WriterSettings {
  file: string;
  synchronous: 'NORMAL' | 'FULL';
  /**
   * When set, the writer checkpoints the WAL itself, between its batches, this often, and none runs
   * inside a commit; nothing else writes much, so each one reaches the WAL's end and the next batch
   * starts it over. When not, SQLite checkpoints inside the commit that crosses its threshold.
   */
  checkpointMs?: number;
}

/** A write, in the order the store was asked for it; each is answered by its number. */
export type WriteOp =
  | { op: 'write'; batch: DeliveryBatch }
  | { op: 'putSecret'; secret: HookSecretRecord }
  | { op: 'deleteSecret'; hookId: string }
  | { op: 'rewriteRequest'; rewrite: RequestRewrite }
  | { op: 'prune'; rule: RetentionRule }
  | { op: 'replaceCredentialRow'; row: CredentialRow; text: string }
  | { op: 'replaceStoredSecret'; before: StoredSecretRow; next: StoredSecretRow };

export type ToWriter = { t: 'ops'; ns: number[]; ops: WriteOp[] } | { t: 'close' };

/** An error as it crossed: enough to name it and to tell a store fault (store-fault.ts) from a bug. */
export interface WireError {
  name: string;
  message: string;
  code?: string;
}

export type Answer = { ok: true; value: unknown } | { ok: false; error: WireError };

export type FromWriter = { t: 'done'; ns: number[]; answers: Answer[] } | { t: 'closed' };
