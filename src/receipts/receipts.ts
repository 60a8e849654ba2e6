/**
 * A delivery to a broker has no status code: what says it arrived is its receipt in words
 * (`confirmed by 127.0.0.1:5672, exchange ts.events, routing key ts.ts1`, a stream entry id),
 * which the delivery log keeps as the attempt's response text. The delivery record itself keeps
 * only the last status and error, so a list of deliveries reads each broker delivery's attempts
 * for its receipt; a receipt read once is kept by delivery and attempt count (a redelivery adds
 * an attempt, and with it a new receipt).
 */
import type { AttemptRecord, DeliveryRecord } from '../store/index.js';

/** Where a delivery's attempts are read. */
export interface AttemptSource {
  getWithAttempts(id: string): Promise<{ attempts: readonly AttemptRecord[] } | undefined>;
}

/** Receipts kept at once; a few pages' worth. */
export const LAST_RECEIPT_CAP = 2000;
const kept = new Map<string, string>();

/** The receipt of the newest attempt that has one: delivered, without a status code. */
export function receiptOf(attempts: readonly AttemptRecord[]): string | undefined {
  for (let i = attempts.length - 1; i >= 0; i--) {
    const a = attempts[i]!;
    if (a.statusCode === null && a.error === null && a.responseBody) return a.responseBody;
  }
  return undefined;
}

/** Whether a delivery's outcome is a receipt: it succeeded without an HTTP status. */
const byReceipt = (d: DeliveryRecord) => d.status === 'succeeded' && d.lastStatusCode === null;

/** Each listed broker delivery's receipt, by delivery id (HTTP deliveries have none). */
export async function lastReceipts(
  source: AttemptSource,
  deliveries: readonly DeliveryRecord[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await Promise.all(
    deliveries.filter(byReceipt).map(async (d) => {
      const key = `${d.id}#${d.attempts}`;
      let receipt = kept.get(key);
      if (receipt === undefined) {
        const found = await source.getWithAttempts(d.id);
        receipt = found === undefined ? undefined : receiptOf(found.attempts);
        if (receipt === undefined) return;
        if (kept.size >= LAST_RECEIPT_CAP) kept.delete(kept.keys().next().value!);
        kept.set(key, receipt);
      }
      out.set(d.id, receipt);
    }),
  );
  return out;
}
