/**
 * Timers for due attempts: one min-heap of due times and one timer armed for the earliest, so a
 * million waiting retries cost one timer and no store polling.
 */

/** What the scheduler orders: a due time (null counts as due at once). */
export interface Schedulable {
  nextAttempt: number | null;
}

// setTimeout takes at most 2^31-1 ms; longer waits re-arm when the timer fires.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** An item's place in the heap, kept by the heap so that the item carries none of it. */
interface Slot<T> {
  readonly item: T;
  index: number;
}

/**
 * A binary min-heap on `nextAttempt` that tracks positions, so removal and re-keying are O(log n).
 * Each item's slot is found through one Map entry, set on push and deleted on pop or removal; the
 * sifting moves only the slots. The key is read from the item at each comparison, as it is.
 */
export class DueHeap<T extends Schedulable> {
  private readonly slots: Slot<T>[] = [];
  private readonly slotOf = new Map<T, Slot<T>>();

  get size(): number {
    return this.slots.length;
  }

  has(item: T): boolean {
    return this.slotOf.has(item);
  }

  peek(): T | undefined {
    return this.slots[0]?.item;
  }

  push(item: T): void {
    if (this.slotOf.has(item)) return;
    const slot: Slot<T> = { item, index: this.slots.length };
    this.slotOf.set(item, slot);
    this.slots.push(slot);
    this.up(slot);
  }

  pop(): T | undefined {
    const slots = this.slots;
    const top = slots[0];
    if (top === undefined) return undefined;
    const last = slots.pop()!;
    if (last !== top) {
      slots[0] = last;
      last.index = 0;
      this.down(last);
    }
    this.slotOf.delete(top.item);
    return top.item;
  }

  /** Removes an item wherever it is; false when it was not in the heap. */
  remove(item: T): boolean {
    const slot = this.slotOf.get(item);
    if (slot === undefined) return false;
    this.slotOf.delete(item);
    const last = this.slots.pop()!;
    if (last !== slot) {
      this.slots[slot.index] = last;
      last.index = slot.index;
      this.down(last);
      this.up(last);
    }
    return true;
  }

  /** Every item, in no particular order. */
  values(): T[] {
    return this.slots.map((s) => s.item);
  }

  private key(i: number): number {
    return this.slots[i]!.item.nextAttempt ?? 0;
  }

  private up(slot: Slot<T>): void {
    const slots = this.slots;
    const k = slot.item.nextAttempt ?? 0;
    let i = slot.index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.key(parent) <= k) break;
      const p = slots[parent]!;
      slots[i] = p;
      p.index = i;
      i = parent;
    }
    slots[i] = slot;
    slot.index = i;
  }

  private down(slot: Slot<T>): void {
    const slots = this.slots;
    const n = slots.length;
    const k = slot.item.nextAttempt ?? 0;
    let i = slot.index;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && this.key(right) < this.key(left) ? right : left;
      if (this.key(child) >= k) break;
      const c = slots[child]!;
      slots[i] = c;
      c.index = i;
      i = child;
    }
    slots[i] = slot;
    slot.index = i;
  }
}

/**
 * Hands items to the `onDue` it was started with when their `nextAttempt` has come. Stopped (or
 * its signal aborted), it keeps its items and arms no timer; `start` fires whatever fell due
 * meanwhile. It is the place every pending delivery waits, so it is made before the parts that
 * put deliveries in it, and started with the part that takes them out.
 */
export class Scheduler<T extends Schedulable> {
  private readonly heap = new DueHeap<T>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private onDue: ((item: T) => void) | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  get size(): number {
    return this.heap.size;
  }

  /** Handing items out to `onDue`: true between `start` and `stop`. */
  get running(): boolean {
    return this.onDue !== undefined;
  }

  /** Hands due items to `onDue` until `stop`, or until `signal` aborts. */
  start(onDue: (item: T) => void, signal?: AbortSignal): void {
    if (signal?.aborted) return;
    this.onDue = onDue;
    signal?.addEventListener('abort', () => this.stop(), { once: true });
    this.fire();
  }

  stop(): void {
    this.onDue = undefined;
    this.disarm();
  }

  /** An item due now goes to `onDue` at once while running; any other is scheduled. */
  offer(item: T): void {
    const onDue = this.onDue;
    if (onDue !== undefined && (item.nextAttempt ?? 0) <= this.now()) onDue(item);
    else this.add(item);
  }

  /** Schedules (or re-schedules) an item at its `nextAttempt`. */
  add(item: T): void {
    this.heap.remove(item);
    this.heap.push(item);
    if (this.onDue !== undefined && (item.nextAttempt ?? 0) < this.timerAt) this.arm();
  }

  remove(item: T): boolean {
    return this.heap.remove(item);
  }

  /** Every scheduled item, in no particular order. */
  values(): readonly T[] {
    return this.heap.values();
  }

  private fire = (): void => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    if (this.onDue === undefined) return;
    const now = this.now();
    for (;;) {
      const top = this.heap.peek();
      const onDue = this.onDue;
      if (onDue === undefined) return;
      if (top === undefined || (top.nextAttempt ?? 0) > now) break;
      this.heap.pop();
      onDue(top);
    }
    this.arm();
  };

  private arm(): void {
    const top = this.heap.peek();
    if (top === undefined) {
      this.disarm();
      return;
    }
    const at = top.nextAttempt ?? 0;
    if (this.timer !== undefined && at >= this.timerAt) return;
    this.disarm();
    this.timerAt = at;
    const delay = Math.min(Math.max(0, at - this.now()), MAX_TIMER_MS);
    // Unref'd: pending retries alone do not keep a process alive; the daemon's server does.
    this.timer = setTimeout(this.fire, delay);
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }
}
