/**
 * Ordered delivery per key: of the deliveries of one hook with the same ordering key,
 * one is sent at a time, in trigger order. The head goes like any delivery (limits, retries);
 * its successors wait here, outside the scheduler and the limiter, until it ends (succeeded,
 * failed after its last attempt, or not sent), and then the next one is handed back.
 *
 * Order: first-round deliveries by Id (Ids sort by creation: trigger order), then redelivered
 * ones (a new round of a finished delivery) by Id: a redelivery goes behind everything of its key
 * that is waiting, the same before and after a restart. A head that has started keeps its place.
 */

import { SHARED_RECHECK_MS } from './shared-store-check.js';

/** What the queues need of a delivery (src/delivery/delivery.ts has it). */
export interface OrderedItem {
  readonly id: string;
  readonly hookId: string;
  /** Attempts before the current round: above 0 for a redelivery. */
  roundStart: number;
  cancelled: boolean;
  /** The delivery log's `HeldBy` text. */
  heldBy: string | undefined;
  /** The delivery it waits behind (the delivery log's `HeldBehind`). */
  heldBehind: string | undefined;
}

interface Queue<T> {
  items: T[];
  /** The head has been let go at least once: nothing is put before it any more. */
  started: boolean;
}

export class KeyQueues<T extends OrderedItem> {
  private readonly queues = new Map<string, Queue<T>>();
  private readonly keyOf = new Map<T, string>();
  /** Held items due to go: handed back when they become the head. */
  private readonly waiting = new Set<T>();
  /** Attempts held back behind a head, since start (metrics). */
  heldTotal = 0;
  /** Heads the shared store has cleared (nothing earlier of their key pending elsewhere). */
  private readonly cleared = new WeakSet<T>();
  private readonly checking = new WeakSet<T>();

  /**
   * @param keyFor the delivery's ordering key, undefined when its hook is not ordered
   * @param release hands a held delivery back to be sent now that it is the head
   * @param shared in a cluster, whether nothing of the head's key is pending before it on other
   *   instances (shared-store-check.ts); absent: this instance holds every delivery of a key
   */
  constructor(
    private readonly keyFor: (item: T) => string | undefined,
    private readonly release: (item: T) => void,
    private readonly shared?: (item: T) => Promise<boolean>,
  ) {}

  /** A delivery became live (fired, loaded, claimed or redelivered). */
  add(item: T): void {
    if (this.keyOf.has(item)) return;
    const k = this.keyFor(item);
    if (k === undefined) return;
    const key = `${item.hookId}\n${k}`;
    this.keyOf.set(item, key);
    let q = this.queues.get(key);
    if (q === undefined) {
      q = { items: [], started: false };
      this.queues.set(key, q);
    }
    const items = q.items;
    let i = items.length;
    const floor = q.started ? 1 : 0;
    while (i > floor && before(item, items[i - 1]!)) i--;
    items.splice(i, 0, item);
  }

  /**
   * Whether a due delivery may be sent now: unordered ones and heads may; the others are held
   * (marked with what they wait behind) and handed back through `release` later.
   */
  admit(item: T): boolean {
    const key = this.keyOf.get(item);
    if (key === undefined) return true;
    const q = this.queues.get(key)!;
    const head = q.items[0]!;
    if (head === item && this.shared !== undefined && !this.cleared.has(item)) {
      this.waiting.add(item);
      item.heldBy = 'order: an earlier delivery of its key is pending on another instance';
      this.check(item);
      return false;
    }
    if (head === item) {
      q.started = true;
      this.waiting.delete(item);
      item.heldBehind = undefined;
      return true;
    }
    if (!this.waiting.has(item)) this.heldTotal++;
    this.waiting.add(item);
    item.heldBehind = head.id;
    item.heldBy = `order behind ${head.id}`;
    return false;
  }

  /** A delivery ended or was let go: the next of its key, if it is waiting, goes. */
  remove(item: T): void {
    const key = this.keyOf.get(item);
    if (key === undefined) return;
    this.keyOf.delete(item);
    this.waiting.delete(item);
    const q = this.queues.get(key)!;
    const i = q.items.indexOf(item);
    if (i >= 0) q.items.splice(i, 1);
    if (i === 0) q.started = false;
    if (q.items.length === 0) {
      this.queues.delete(key);
      return;
    }
    // A cancelled delivery (hook deleted, lease lost) releases nobody: the rest go with it.
    if (i !== 0 || item.cancelled) return;
    const next = q.items[0]!;
    if (this.waiting.delete(next)) {
      next.heldBehind = undefined;
      next.heldBy = undefined;
      this.release(next);
    }
  }

  /** Asks the shared store until the head is clear, then hands it back. */
  private check(item: T): void {
    if (this.checking.has(item)) return;
    this.checking.add(item);
    const again = (clear: boolean): void => {
      this.checking.delete(item);
      if (!this.keyOf.has(item) || item.cancelled) return;
      if (clear) {
        this.cleared.add(item);
        if (this.waiting.delete(item)) {
          item.heldBy = undefined;
          this.release(item);
        }
        return;
      }
      setTimeout(() => this.check(item), SHARED_RECHECK_MS).unref();
    };
    this.shared!(item).then(again, () => again(false));
  }

  /** Keys with at least one delivery waiting behind their head (metrics). */
  get heldKeys(): number {
    let n = 0;
    for (const q of this.queues.values()) if (q.items.length > 1) n++;
    return n;
  }

  /** Deliveries waiting behind a head. */
  get held(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.items.length - 1;
    return n;
  }
}

/** Trigger order: first rounds before redeliveries, then by Id. */
function before(a: OrderedItem, b: OrderedItem): boolean {
  const ra = a.roundStart > 0 ? 1 : 0;
  const rb = b.roundStart > 0 ? 1 : 0;
  return ra !== rb ? ra < rb : a.id < b.id;
}
