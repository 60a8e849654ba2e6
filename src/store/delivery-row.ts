import type {
  AttemptRecord,
  DeliveryRecord,
  DeliveryState,
  DeliveryStatus,
  HookSecretRecord,
  StoredRequest,
} from './delivery-store.js';
import { openRecord, openUrl, type SecretCodec, type StoredSecretRow } from './secret-codec.js';

/**
 * A delivery from its SQL row. SQLite and PostgreSQL share the column names (one schema, two
 * dialects); only the body's type differs (TEXT vs BYTEA), so the caller decodes it.
 */
export function deliveryFromRow(
  r: Record<string, unknown>,
  body: string | undefined,
  codec: SecretCodec,
): DeliveryRecord {
  const request: StoredRequest = {
    method: r.method as StoredRequest['method'],
    url: openUrl(codec, r.hook_id as string, r.url as string),
    headers: JSON.parse(r.headers as string) as Record<string, string>,
  };
  if (body !== undefined) request.body = body;
  const tStatus = r.t_status as number | null;
  const tUser = r.t_user as string | null | undefined;
  return {
    id: r.id as string,
    hookId: r.hook_id as string,
    owner: r.owner as string,
    hookType: r.hook_type as 0 | 1,
    status: r.status as DeliveryStatus,
    attempts: r.attempts as number,
    roundStart: r.round_start as number,
    created: r.created as number,
    nextAttempt: r.next_attempt as number | null,
    lastStatusCode: r.last_status as number | null,
    lastError: r.last_error as string | null,
    trigger: {
      method: r.t_method as string,
      path: r.t_path as string,
      ...(tStatus !== null && { statusCode: tStatus }),
      ...(tUser != null && { user: tUser }),
    },
    request,
    ...(typeof r.trace_parent === 'string' && { traceParent: r.trace_parent }),
    ...(typeof r.transform_input === 'string' && { transformInput: r.transform_input }),
  };
}

/** An attempt from its SQL row; the response body is decoded by the caller, as above. */
export function attemptFromRow(r: Record<string, unknown>, responseBody: string | null): AttemptRecord {
  return {
    deliveryId: r.delivery_id as string,
    hookId: r.hook_id as string,
    attempt: r.attempt as number,
    time: r.time as number,
    statusCode: r.status as number | null,
    latencyMs: r.latency_ms as number,
    error: r.error as string | null,
    responseBody,
    ...(typeof r.rate_wait_ms === 'number' && r.rate_wait_ms > 0 && { rateLimitWaitMs: r.rate_wait_ms }),
  };
}

/** The last update of each delivery: one multi-row statement must not change a row twice. */
export function dedupeUpdates(updates: readonly DeliveryState[]): readonly DeliveryState[] {
  if (updates.length < 2) return updates;
  const last = new Map<string, DeliveryState>();
  for (const u of updates) last.set(u.id, u);
  return last.size === updates.length ? updates : [...last.values()];
}

/** A hook's signing secrets from their SQL row (the same columns in both dialects), opened. */
export function secretFromRow(r: Record<string, unknown>, codec: SecretCodec): HookSecretRecord {
  return openRecord(codec, {
    hookId: r.hook_id as string,
    secret: r.secret as string,
    previous: r.previous as string | null,
    previousValidUntil: r.previous_valid_until === null ? null : Number(r.previous_valid_until),
  });
}

/** A secrets table's row as stored (not opened), for re-sealing. */
export function storedSecretFromRow(r: Record<string, unknown>): StoredSecretRow {
  return { hookId: r.hook_id as string, secret: r.secret as string, previous: r.previous as string | null };
}
