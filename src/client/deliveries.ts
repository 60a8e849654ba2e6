import { MAX_PAGE } from './hooks.js';
import { type Http, seg } from './http.js';
import type {
  BulkRedelivery,
  BulkRedeliveryFilter,
  Delivery,
  DeliveryFilter,
  DeliveryWithAttempts,
} from './types.js';

export interface DeliveryListOptions extends DeliveryFilter {
  /** The hook (Id or Name) whose deliveries to list. */
  hook: string;
  /** Deliveries per request; default 100, at most 1000. */
  pageSize?: number;
  /** Told the first page's `Hookd-Receiver-Concurrency`: the pace the hook's receiver sets now. */
  onReceiverPace?: (header: string) => void;
}

/** The delivery log: a hook's deliveries, one delivery, redelivery. */
export class Deliveries {
  readonly #http: Http;

  constructor(http: Http) {
    this.#http = http;
  }

  /** A hook's deliveries, newest first, fetched a page at a time as you iterate. */
  list(opts: DeliveryListOptions): AsyncIterable<Delivery> {
    const q = new URLSearchParams();
    if (opts.status !== undefined) q.set('status', opts.status);
    if (opts.since !== undefined) q.set('since', opts.since);
    if (opts.until !== undefined) q.set('until', opts.until);
    q.set('limit', String(Math.min(opts.pageSize ?? 100, MAX_PAGE)));
    return this.#http.pages<Delivery>(`/hooks/${seg(opts.hook)}/deliveries?${q}`, (page) => {
      const pace = page.headers['hookd-receiver-concurrency'];
      if (typeof pace === 'string') opts.onReceiverPace?.(pace);
    });
  }

  /** One delivery with its AttemptLog. */
  async get(id: string): Promise<DeliveryWithAttempts> {
    return (
      await this.#http.call<DeliveryWithAttempts>('GET', `/_hookd/deliveries/${seg(id)}`, {
        idempotent: true,
      })
    ).body;
  }

  /** Queues one delivery again, with the same Id. */
  async redeliver(id: string): Promise<Delivery> {
    return (await this.#http.call<Delivery>('POST', `/_hookd/deliveries/${seg(id)}/redeliver`)).body;
  }

  /** Queues a hook's deliveries again: all, or by status and time range (`dryRun` only counts). */
  async redeliverAll(hook: string, filter: BulkRedeliveryFilter = {}): Promise<BulkRedelivery> {
    return (await this.#http.call<BulkRedelivery>('POST', `/hooks/${seg(hook)}/redeliver`, { body: filter }))
      .body;
  }
}
