/**
 * The delivery log as recorded so far: every read first commits what the outbox holds, so that a
 * delivery fired a moment ago is found. What the API's routes and the console read through,
 * so that a reader needs nothing else of the pipeline.
 */
import type { AttemptRecord, DeliveryQuery, DeliveryRecord } from '../store/index.js';
import type { DeliveryLog, DeliveryPage } from './delivery-log.js';

export interface DeliveryDetail {
  delivery: DeliveryRecord;
  attempts: AttemptRecord[];
}

export class DeliveryReader {
  constructor(
    private readonly log: DeliveryLog,
    private readonly flush: () => Promise<void>,
  ) {}

  /** A hook's deliveries, newest first, with paging (the delivery log), as recorded so far. */
  async list(hookId: string, query: DeliveryQuery = {}): Promise<DeliveryPage> {
    await this.flush();
    return this.log.list(hookId, query);
  }

  /** One delivery, or undefined. */
  async get(id: string): Promise<DeliveryRecord | undefined> {
    await this.flush();
    return (await this.log.get(id))?.record;
  }

  /** One delivery with its attempts (everything recorded so far), or undefined. */
  async getWithAttempts(id: string): Promise<DeliveryDetail | undefined> {
    await this.flush();
    const found = await this.log.get(id);
    if (!found) return undefined;
    return { delivery: found.record, attempts: await this.log.attempts(id, found.persist) };
  }
}
