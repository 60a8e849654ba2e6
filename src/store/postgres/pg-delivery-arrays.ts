/**
 * A delivery batch as PostgreSQL column arrays: one
 * array per column, so that a statement takes a whole batch through `unnest` in one round trip.
 */
import type { AttemptRecord, DeliveryRecord, DeliveryState } from '../delivery-store.js';
import { type SecretCodec, sealUrl } from '../secret-codec.js';

/** PostgreSQL text cannot hold U+0000; what comes from outside (paths, error texts) may. */
const clean = (s: string | null | undefined): string | null =>
  s == null ? null : s.includes('\0') ? s.replaceAll('\0', '\ufffd') : s;

export function overlaps(inserts: readonly DeliveryRecord[], updates: readonly DeliveryState[]): boolean {
  const ids = new Set(inserts.map((r) => r.id));
  return updates.some((u) => ids.has(u.id));
}

export function insertArrays(rows: readonly DeliveryRecord[], codec: SecretCodec): unknown[][] {
  const n = rows.length;
  const cols: unknown[][] = Array.from({ length: 21 }, () => new Array<unknown>(n));
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    const q = r.request;
    cols[0]![i] = r.id;
    cols[1]![i] = r.hookId;
    cols[2]![i] = r.owner;
    cols[3]![i] = r.hookType;
    cols[4]![i] = r.status;
    cols[5]![i] = r.attempts;
    cols[6]![i] = r.roundStart;
    cols[7]![i] = r.created;
    cols[8]![i] = r.nextAttempt;
    cols[9]![i] = r.lastStatusCode;
    cols[10]![i] = clean(r.lastError);
    cols[11]![i] = clean(r.trigger.method);
    cols[12]![i] = clean(r.trigger.path);
    cols[13]![i] = r.trigger.statusCode ?? null;
    cols[14]![i] = q.method;
    cols[15]![i] = clean(sealUrl(codec, r.hookId, q.url));
    cols[16]![i] = JSON.stringify(q.headers);
    cols[17]![i] = q.body === undefined ? null : Buffer.from(q.body, 'utf8');
    cols[18]![i] = r.trigger.user === undefined ? null : clean(r.trigger.user);
    cols[19]![i] = r.traceParent ?? null;
    cols[20]![i] = clean(r.transformInput);
  }
  return cols;
}

export function updateArrays(rows: readonly DeliveryState[]): unknown[][] {
  const n = rows.length;
  const cols: unknown[][] = Array.from({ length: 7 }, () => new Array<unknown>(n));
  for (let i = 0; i < n; i++) {
    const u = rows[i]!;
    cols[0]![i] = u.id;
    cols[1]![i] = u.status;
    cols[2]![i] = u.attempts;
    cols[3]![i] = u.roundStart;
    cols[4]![i] = u.nextAttempt;
    cols[5]![i] = u.lastStatusCode;
    cols[6]![i] = clean(u.lastError);
  }
  return cols;
}

export function attemptArrays(rows: readonly AttemptRecord[]): unknown[][] {
  const n = rows.length;
  const cols: unknown[][] = Array.from({ length: 9 }, () => new Array<unknown>(n));
  for (let i = 0; i < n; i++) {
    const a = rows[i]!;
    cols[0]![i] = a.deliveryId;
    cols[1]![i] = a.attempt;
    cols[2]![i] = a.hookId;
    cols[3]![i] = a.time;
    cols[4]![i] = a.statusCode;
    cols[5]![i] = a.latencyMs;
    cols[6]![i] = clean(a.error);
    cols[7]![i] = a.responseBody === null ? null : Buffer.from(a.responseBody, 'utf8');
    cols[8]![i] = a.rateLimitWaitMs ?? null;
  }
  return cols;
}
