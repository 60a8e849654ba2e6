/**
 * The writes a group commit gathers for one store, as plain frozen snapshots: the store writes a
 * delivery's state as it was when the write was queued, and nothing it holds changes under it
 * (the batch could cross a thread boundary as it is).
 */
import {
  type AttemptRecord,
  copyDeliveryState,
  type DeliveryBatch,
  type DeliveryRecord,
  type DeliveryState,
} from '../store/index.js';
import type { Delivery } from './delivery.js';

/** A delivery's record as it is now. Its trigger and request are the fired ones, never changed. */
export function recordOf(d: Delivery): DeliveryRecord {
  const { id, hookId, owner, hookType, created, trigger, request } = d;
  // The state fields are filled by copyDeliveryState, the store's one list of them.
  const r = { id, hookId, owner, hookType, created, trigger, request } as DeliveryRecord;
  copyDeliveryState(r, d);
  if (d.traceParent !== undefined) r.traceParent = d.traceParent;
  if (d.transformInput !== undefined) r.transformInput = d.transformInput;
  return Object.freeze(r);
}

/** A delivery's changing state as it is now. */
export function stateOf(d: DeliveryState): DeliveryState {
  const s = { id: d.id } as DeliveryState;
  copyDeliveryState(s, d);
  return Object.freeze(s);
}

/**
 * One batch of writes, holding each delivery's row once: a delivery inserted and changed before
 * the batch goes out is one insert of its latest state, and several changes of one delivery are
 * one update, its last. That keeps one write per delivery per batch however busy it is.
 */
export class WriteBatch implements DeliveryBatch {
  readonly inserts: DeliveryRecord[] = [];
  readonly updates: DeliveryState[] = [];
  readonly attempts: AttemptRecord[] = [];
  readonly deletedHooks: string[] = [];
  // Where each delivery's row is, by Id: an update at index i, an insert at -1 - i.
  private readonly slots = new Map<string, number>();

  get empty(): boolean {
    return (
      this.inserts.length === 0 &&
      this.updates.length === 0 &&
      this.attempts.length === 0 &&
      this.deletedHooks.length === 0
    );
  }

  insert(r: DeliveryRecord): void {
    this.slots.set(r.id, -1 - this.inserts.length);
    this.inserts.push(r);
  }

  /** The delivery's state as it is now: its queued insert or update is replaced, or one is queued. */
  change(d: Delivery): void {
    const slot = this.slots.get(d.id);
    if (slot === undefined) {
      this.slots.set(d.id, this.updates.length);
      this.updates.push(stateOf(d));
    } else if (slot >= 0) this.updates[slot] = stateOf(d);
    else this.inserts[-1 - slot] = recordOf(d);
  }

  /**
   * Takes a later batch's writes behind its own (the store-fault buffer): an update of a delivery
   * this batch inserts goes into that insert, and one of a delivery it updates replaces that update.
   */
  absorb(later: WriteBatch): void {
    for (const r of later.inserts) this.insert(r);
    for (const s of later.updates) {
      const slot = this.slots.get(s.id);
      if (slot === undefined) {
        this.slots.set(s.id, this.updates.length);
        this.updates.push(s);
      } else if (slot >= 0) this.updates[slot] = s;
      else this.inserts[-1 - slot] = Object.freeze({ ...this.inserts[-1 - slot]!, ...s });
    }
    for (const a of later.attempts) this.attempts.push(a);
    for (const h of later.deletedHooks) this.deletedHooks.push(h);
  }
}
