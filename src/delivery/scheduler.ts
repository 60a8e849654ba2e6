/**
 * Timers for due attempts: one min-heap of due times and one timer armed for the earliest, so a
 * million waiting retries cost one timer and no store polling.
 */

/** What the scheduler orders: a due time and its slot in the heap (-1 when not scheduled). */
export interface Schedulable {
  nextAttempt: number | null;
  heapIndex: number;
}

// setTimeout takes at most 2^31-1 ms; longer waits re-arm when the timer fires.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A binary min-heap on `nextAttempt` that tracks positions, so removal and re-keying are O(log n). */
export class DueHeap<T extends Schedulable> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.up(item.heapIndex);
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    if (top === undefined) return undefined;
    const last = items.pop()!;
    if (last !== top) {
      items[0] = last;
      last.heapIndex = 0;
      this.down(0);
    }
    top.heapIndex = -1;
    return top;
  }

  /** Removes an item wherever it is; false when it was not in the heap. */
  remove(item: T): boolean {
    const i = item.heapIndex;
    if (i < 0 || this.items[i] !== item) return false;
    const last = this.items.pop()!;
    if (last !== item) {
      this.items[i] = last;
      last.heapIndex = i;
      this.down(i);
      this.up(last.heapIndex);
    }
    item.heapIndex = -1;
    return true;
  }

  /** Every item, in no particular order. */
  values(): readonly T[] {
    return this.items;
  }

  private key(i: number): number {
    return this.items[i]!.nextAttempt ?? 0;
  }

  private up(i: number): void {
    const items = this.items;
    const item = items[i]!;
    const k = item.nextAttempt ?? 0;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.key(parent) <= k) break;
      items[i] = items[parent]!;
      items[i]!.heapIndex = i;
      i = parent;
    }
    items[i] = item;
    item.heapIndex = i;
  }

  private down(i: number): void {
    const items = this.items;
    const n = items.length;
    const item = items[i]!;
    const k = item.nextAttempt ?? 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && this.key(right) < this.key(left) ? right : left;
      if (this.key(child) >= k) break;
      items[i] = items[child]!;
      items[i]!.heapIndex = i;
      i = child;
    }
    items[i] = item;
    item.heapIndex = i;
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
    if (item.heapIndex >= 0) this.heap.remove(item);
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
