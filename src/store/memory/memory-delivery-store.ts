import { singleProcess } from '../delivery-sharing.js';
import {
  type AttemptRecord,
  copyDeliveryState,
  type DeliveryBatch,
  type DeliveryQuery,
  type DeliveryRecord,
  type DeliveryStore,
  type HookSecretRecord,
  type RequestRewrite,
  type RetentionRule,
} from '../delivery-store.js';
import type { StoredSecretRow } from '../secret-codec.js';
import { MemoryAggregates } from './memory-aggregates.js';

export interface MemoryDeliveryStoreOptions {
  /**
   * Finished deliveries kept per hook (default 10,000). Enforced as deliveries arrive, not only
   * when retention runs: memory cannot wait for the next prune the way a disk can.
   */
  maxPerHook?: number;
}

/**
 * Deliveries in process memory: those of `Persist: false` hooks, gone after a restart like the
 * hooks themselves (SPEC §6). Records are copied in and out (shallowly: the trigger and request
 * are never changed after firing), so callers can go on mutating their own objects.
 */
export class MemoryDeliveryStore implements DeliveryStore {
  readonly kind = 'memory';
  readonly aggregates = new MemoryAggregates({
    deliveries: () => this.deliveries.values(),
    ofHook: (id) => this.byHook.get(id)?.values(),
    attempts: (id) => this.attempts.get(id),
  });
  readonly sharing = singleProcess(this);
  private readonly maxPerHook: number;
  private readonly deliveries = new Map<string, DeliveryRecord>();
  private readonly byHook = new Map<string, Map<string, DeliveryRecord>>();
  /** Per hook, the Ids of deliveries in the order they finished: what the cap removes first. */
  private readonly finished = new Map<string, { ids: string[]; head: number }>();
  private readonly attempts = new Map<string, AttemptRecord[]>();
  private readonly secrets = new Map<string, HookSecretRecord>();

  constructor(opts: MemoryDeliveryStoreOptions = {}) {
    this.maxPerHook = opts.maxPerHook ?? 10_000;
  }

  async write(batch: DeliveryBatch): Promise<void> {
    for (const r of batch.inserts) {
      const copy = copyRecord(r);
      this.deliveries.set(r.id, copy);
      let hook = this.byHook.get(r.hookId);
      if (!hook) {
        hook = new Map();
        this.byHook.set(r.hookId, hook);
      }
      hook.set(r.id, copy);
      if (copy.status !== 'pending') this.finishedOne(copy);
    }
    for (const u of batch.updates) {
      const r = this.deliveries.get(u.id);
      if (!r) continue;
      const wasPending = r.status === 'pending';
      copyDeliveryState(r, u);
      if (wasPending && r.status !== 'pending') this.finishedOne(r);
    }
    // Attempt records are never changed after they are written, so they are kept as given.
    for (const a of batch.attempts) {
      const list = this.attempts.get(a.deliveryId);
      if (list) list.push(a);
      else this.attempts.set(a.deliveryId, [a]);
    }
    for (const hookId of batch.deletedHooks) {
      const hook = this.byHook.get(hookId);
      if (hook) {
        for (const id of hook.keys()) {
          this.deliveries.delete(id);
          this.attempts.delete(id);
        }
        this.byHook.delete(hookId);
      }
      this.finished.delete(hookId);
      this.secrets.delete(hookId);
    }
  }

  async rewriteRequest(w: RequestRewrite): Promise<boolean> {
    const r = this.deliveries.get(w.id);
    if (!r) return false;
    r.request = { ...r.request, headers: { ...w.headers } };
    if (w.body !== undefined) r.request.body = w.body;
    else delete r.request.body;
    delete r.transformInput;
    return true;
  }

  async getDelivery(id: string): Promise<DeliveryRecord | undefined> {
    const r = this.deliveries.get(id);
    return r && copyRecord(r);
  }

  async listDeliveries(hookId: string, query: DeliveryQuery = {}): Promise<DeliveryRecord[]> {
    const hook = this.byHook.get(hookId);
    if (!hook) return [];
    const out: DeliveryRecord[] = [];
    for (const r of hook.values()) {
      if (query.status !== undefined && r.status !== query.status) continue;
      if (query.since !== undefined && r.created < query.since) continue;
      if (query.until !== undefined && r.created > query.until) continue;
      if (query.after !== undefined && r.id >= query.after) continue;
      if (query.pathPrefix !== undefined && !r.trigger.path.startsWith(query.pathPrefix)) continue;
      const rs = query.receiverStatus;
      if (rs && (r.lastStatusCode === null || r.lastStatusCode < rs[0] || r.lastStatusCode > rs[1])) continue;
      out.push(r);
    }
    out.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return (query.limit === undefined ? out : out.slice(0, query.limit)).map(copyRecord);
  }

  async listAttempts(deliveryId: string): Promise<AttemptRecord[]> {
    return (this.attempts.get(deliveryId) ?? []).map((a) => ({ ...a }));
  }

  async pendingDeliveries(): Promise<DeliveryRecord[]> {
    const out: DeliveryRecord[] = [];
    for (const r of this.deliveries.values()) if (r.status === 'pending') out.push(copyRecord(r));
    return out;
  }

  async getSecret(hookId: string): Promise<HookSecretRecord | undefined> {
    const s = this.secrets.get(hookId);
    return s && { ...s };
  }

  async putSecret(secret: HookSecretRecord): Promise<void> {
    this.secrets.set(secret.hookId, { ...secret });
  }

  async deleteSecret(hookId: string): Promise<boolean> {
    return this.secrets.delete(hookId);
  }

  // Process memory is never written to disk: its secrets are kept as they are, and its rows are
  // the plain values (a re-sealing walk finds nothing to do here).
  async storedSecrets(after: string, limit: number): Promise<StoredSecretRow[]> {
    return [...this.secrets.values()]
      .filter((s) => s.hookId > after)
      .sort((a, b) => (a.hookId < b.hookId ? -1 : 1))
      .slice(0, limit)
      .map((s) => ({ hookId: s.hookId, secret: s.secret, previous: s.previous }));
  }

  async replaceStoredSecret(before: StoredSecretRow, next: StoredSecretRow): Promise<boolean> {
    const s = this.secrets.get(before.hookId);
    if (!s || s.secret !== before.secret || s.previous !== before.previous) return false;
    this.secrets.set(before.hookId, { ...s, secret: next.secret, previous: next.previous });
    return true;
  }

  /**
   * Notes a finished delivery and, past the cap (with a tenth of slack, so that this happens once
   * per many deliveries), drops the hook's earliest finished ones. Pending ones are never counted
   * or dropped, so a backlog of pending deliveries costs nothing here.
   */
  private finishedOne(r: DeliveryRecord): void {
    let q = this.finished.get(r.hookId);
    if (!q) {
      q = { ids: [], head: 0 };
      this.finished.set(r.hookId, q);
    }
    q.ids.push(r.id);
    if (q.ids.length - q.head <= this.maxPerHook + Math.ceil(this.maxPerHook / 10)) return;
    const hook = this.byHook.get(r.hookId);
    while (q.ids.length - q.head > this.maxPerHook) {
      const id = q.ids[q.head++]!;
      const d = hook?.get(id);
      // Gone already (pruned), or queued again by a redelivery: it is noted again when it finishes.
      if (!d || d.status === 'pending') continue;
      hook!.delete(id);
      this.deliveries.delete(id);
      this.attempts.delete(id);
    }
    if (q.head > 1024 && q.head * 2 > q.ids.length) {
      q.ids = q.ids.slice(q.head);
      q.head = 0;
    }
  }

  async prune(rule: RetentionRule): Promise<number> {
    let removed = 0;
    for (const [hookId, hook] of this.byHook) {
      const all = [...hook.values()].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
      for (let i = 0; i < all.length && removed < rule.limit; i++) {
        const r = all[i]!;
        if (r.status === 'pending' || (i < rule.maxPerHook && r.created >= rule.olderThan)) continue;
        hook.delete(r.id);
        this.deliveries.delete(r.id);
        this.attempts.delete(r.id);
        removed++;
      }
      if (hook.size === 0) {
        this.byHook.delete(hookId);
        this.finished.delete(hookId);
      }
      if (removed >= rule.limit) break;
    }
    return removed;
  }
}

function copyRecord(r: DeliveryRecord): DeliveryRecord {
  return {
    id: r.id,
    hookId: r.hookId,
    owner: r.owner,
    hookType: r.hookType,
    created: r.created,
    status: r.status,
    attempts: r.attempts,
    roundStart: r.roundStart,
    nextAttempt: r.nextAttempt,
    lastStatusCode: r.lastStatusCode,
    lastError: r.lastError,
    trigger: r.trigger,
    request: r.request,
    ...(r.traceParent !== undefined && { traceParent: r.traceParent }),
    ...(r.transformInput !== undefined && { transformInput: r.transformInput }),
  };
}
