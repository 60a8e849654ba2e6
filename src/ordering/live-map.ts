import type { KeyQueues, OrderedItem } from './key-queues.js';

/**
 * The pipeline's map of live deliveries, telling the key queues of every delivery that becomes
 * live or leaves: every way in (firing, start, claim, redelivery) and out (end, not sent, hook
 * deleted, lease lost) passes through this map, so ordering needs no call at each of them.
 */
export class OrderedLiveMap<T extends OrderedItem> extends Map<string, T> {
  constructor(private readonly queues: KeyQueues<T>) {
    super();
  }

  override set(id: string, item: T): this {
    super.set(id, item);
    // Map's constructor calls set before the field exists.
    this.queues?.add(item);
    return this;
  }

  override delete(id: string): boolean {
    const item = super.get(id);
    const had = super.delete(id);
    if (item !== undefined) this.queues.remove(item);
    return had;
  }
}
