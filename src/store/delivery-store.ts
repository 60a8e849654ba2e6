/**
 * Storage of the delivery side: deliveries (the outbox and the delivery log at once), their
 * attempts, and the hooks' signing secrets. The memory and SQLite backends pass the same contract
 * suite (test/store/delivery-store.test.ts). Times are epoch milliseconds throughout: they index
 * and compare cheaply, and the API formats them.
 */

import type { DeliveryAggregates } from './delivery-aggregates.js';
import type { SealedSecretTable } from './sealed-secret-table.js';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** The callback request as fired (the engine's `CallbackRequest`, restated so storage imports no engine). */
export interface StoredRequest {
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'GET';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** What triggered the callback (the engine's `TriggerInfo`). */
export interface StoredTrigger {
  method: string;
  path: string;
  statusCode?: number;
  /** Who made the request; absent: anonymous. */
  user?: string;
}

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed'];

/** The state of a delivery that changes with every attempt. */
export interface DeliveryState {
  id: string;
  status: DeliveryStatus;
  /** Attempts made so far, over every round. */
  attempts: number;
  /**
   * Attempts made before the current round of the retry schedule began: a redelivery starts a new
   * round, so the schedule position is `attempts - roundStart`.
   */
  roundStart: number;
  /** When the next attempt is due; null unless pending. */
  nextAttempt: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
}

/**
 * Copies a delivery's changing state (DeliveryState but the id) onto another object: what an
 * update writes, and what a delivery loaded from a store starts with.
 */
export function copyDeliveryState(to: DeliveryState, from: DeliveryState): void {
  to.status = from.status;
  to.attempts = from.attempts;
  to.roundStart = from.roundStart;
  to.nextAttempt = from.nextAttempt;
  to.lastStatusCode = from.lastStatusCode;
  to.lastError = from.lastError;
}

/** One delivery: a fired callback, ready to send, and its state. */
export interface DeliveryRecord extends DeliveryState {
  hookId: string;
  owner: string;
  hookType: 0 | 1;
  created: number;
  trigger: StoredTrigger;
  request: StoredRequest;
  /**
   * W3C `traceparent` of the span that fired it, when tracing was on: its attempts continue
   * that trace, after a restart or on another instance too. Absent: not traced.
   */
  traceParent?: string;
  /**
   * The event its hook's Transform was given (JSON text), kept only when that Transform failed:
   * a redelivery runs the hook's Transform again on it, so that a fixed hook sends what it
   * would have. Absent: the recorded request is what is sent.
   */
  transformInput?: string;
}

/** A failed Transform's delivery given the request its hook's Transform now made of it. */
export interface RequestRewrite {
  id: string;
  headers: Record<string, string>;
  body?: string;
}

/** One attempt of a delivery, for the delivery log. */
export interface AttemptRecord {
  deliveryId: string;
  hookId: string;
  /** 1-based, counting on across redeliveries. */
  attempt: number;
  /** When the attempt started. */
  time: number;
  /** The receiver's status; null when there was no response (network error, timeout, refusal). */
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** The first 4 KiB of the response body, decoded as UTF-8. */
  responseBody: string | null;
  /** How long the hook's `RateLimit` held the attempt back before it was sent, ms (absent: not at all). */
  rateLimitWaitMs?: number;
}

/** A hook's signing secret and, during a rotation's grace period, the one it replaced. */
export interface HookSecretRecord {
  hookId: string;
  secret: string;
  previous: string | null;
  /** Until when signatures with `previous` are still sent; null when there is none. */
  previousValidUntil: number | null;
}

/**
 * Everything written in one turn of the event loop, committed as one transaction (PERF-NOTES
 * "Recording deliveries": batching is what makes a burst cheap). Applied in this order. Attempt
 * records are handed over: the caller does not change them afterwards (a store may keep them).
 */
export interface DeliveryBatch {
  inserts: readonly DeliveryRecord[];
  updates: readonly DeliveryState[];
  attempts: readonly AttemptRecord[];
  /** Hooks that were deleted: their deliveries, attempts and secret go too. */
  deletedHooks: readonly string[];
}

export interface DeliveryQuery {
  status?: DeliveryStatus;
  /** Created at or after. */
  since?: number;
  /** Created at or before. */
  until?: number;
  /** Deliveries after this one in listing order (newest first): Ids lower than it. */
  after?: string;
  /** The trigger's path starts with this (the console's search). */
  pathPrefix?: string;
  /** The receiver's last status is within [from, to] (one code, or a class such as 500–599). */
  receiverStatus?: readonly [number, number];
  limit?: number;
}

export interface RetentionRule {
  /** Finished deliveries created before this time are removed. */
  olderThan: number;
  /** Of each hook's deliveries only the newest this many are kept (pending ones are never removed). */
  maxPerHook: number;
  /** Removes at most this many deliveries per call, so a large prune never blocks for long. */
  limit: number;
}

export interface DeliveryStore extends SealedSecretTable {
  readonly kind: string;
  /** The web console's overview figures, from rollups this store keeps (delivery-aggregates.ts). */
  readonly aggregates: DeliveryAggregates;
  /** How its pending deliveries and first secrets are shared with other instances, if any. */
  readonly sharing: DeliverySharing;
  /**
   * Applies a batch atomically: a crash leaves all of it or none. Deliveries arrive in creation
   * order (the outbox inserts them as they fire), which a store may rely on to prune by age.
   */
  write(batch: DeliveryBatch): Promise<void>;
  getDelivery(id: string): Promise<DeliveryRecord | undefined>;
  /** A hook's deliveries, newest first (descending Id; Ids sort by creation time). */
  listDeliveries(hookId: string, query?: DeliveryQuery): Promise<DeliveryRecord[]>;
  /** A delivery's attempts in order. */
  listAttempts(deliveryId: string): Promise<AttemptRecord[]>;
  /** Every pending delivery: what resumes at start. */
  pendingDeliveries(): Promise<DeliveryRecord[]>;
  getSecret(hookId: string): Promise<HookSecretRecord | undefined>;
  putSecret(secret: HookSecretRecord): Promise<void>;
  deleteSecret(hookId: string): Promise<boolean>;
  /**
   * Replaces a delivery's recorded request headers and body and drops its `transformInput`: what
   * its Transform made of it on a redelivery. False when there is no such delivery.
   */
  rewriteRequest(rewrite: RequestRewrite): Promise<boolean>;
  /** Removes finished deliveries (never pending ones) and their attempts; returns how many. */
  prune(rule: RetentionRule): Promise<number>;
}

/**
 * What the instances sharing a delivery store (PostgreSQL) agree on: who sends which pending
 * delivery, and a hook's first secret. Every delivery store has one, so callers never ask whether
 * it can; a store of one process answers for itself alone (delivery-sharing.ts).
 */
export interface DeliverySharing {
  /** True when other instances share the store. */
  readonly shared: boolean;
  /**
   * The pending deliveries this instance resumes at start: every one in a store of its own; in a
   * shared store only those no live instance holds, claimed for this one (the others' are theirs).
   */
  resumable(): Promise<DeliveryRecord[]>;
  /**
   * Claims for this instance up to `limit` pending deliveries that no live instance holds (let go
   * at a graceful stop, or held by an instance whose lease ran out). None in a store of one process.
   */
  claim(limit: number): Promise<DeliveryRecord[]>;
  /** Lets go of this instance's pending deliveries (a graceful stop); returns how many. */
  release(): Promise<number>;
  /**
   * Stores a hook's first secret and returns the one stored: in a shared store the one already
   * there when another instance was first, so that both sign with the same.
   */
  storeFirstSecret(secret: HookSecretRecord): Promise<HookSecretRecord>;
}

/** An empty batch to fill. */
export function emptyBatch(): {
  inserts: DeliveryRecord[];
  updates: DeliveryState[];
  attempts: AttemptRecord[];
  deletedHooks: string[];
} {
  return { inserts: [], updates: [], attempts: [], deletedHooks: [] };
}
