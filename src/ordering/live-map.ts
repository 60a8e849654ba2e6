import type { KeyQueues, OrderedItem } from './key-queues.js';

/**
 * The pipeline's live deliveries by id, telling the key queues of every delivery that becomes
 * live or leaves: every way in (firing, start, claim, redelivery) is `add` and every way out
 * (end, not sent, hook deleted, lease lost) is `remove`, so ordering needs no call at each of
 * them. Its own class with its own verbs, not a `Map` whose `set` and `delete` do more.
 */
export class LiveDeliveries<T extends OrderedItem> {
  readonly #byId = new Map<string, T>();

  constructor(private readonly queues: KeyQueues<T>) {}

  get size(): number {
    return this.#byId.size;
  }

  get(id: string): T | undefined {
    return this.#byId.get(id);
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  /** In insertion order; an item removed meanwhile is not visited. */
  values(): IterableIterator<T> {
    return this.#byId.values();
  }

  add(item: T): void {
    this.#byId.set(item.id, item);
    this.queues.add(item);
  }

  /** False when it was not live. */
  remove(id: string): boolean {
    const item = this.#byId.get(id);
    if (item === undefined) return false;
    this.#byId.delete(id);
    this.queues.remove(item);
    return true;
  }
}
