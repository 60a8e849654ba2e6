/**
 * What the engine hands to delivery when a hook fires: the rendered callback request, ready to
 * send, and the facts about the trigger that the delivery log and the live tail show. Firing and
 * sending are apart on purpose: the engine decides and renders, delivery makes it durable and
 * sends it.
 */
import type { TraceRef } from '../tracing/types.js';

export interface CallbackRequest {
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'GET';
  url: string;
  /** The hook's own headers plus `content-type`; header names as the hook wrote them. */
  headers: Record<string, string>;
  /** Absent for GET and DELETE callbacks (SPEC §2). */
  body?: string;
}

export interface TriggerInfo {
  method: string;
  path: string;
  statusCode?: number;
  /** Who made the request (the identity provider, or a report's `User`); absent: anonymous. */
  user?: string;
}

export interface FiredEvent {
  hookId: string;
  owner: string;
  hookType: 0 | 1;
  /** `Persist: false` hooks get in-memory deliveries, gone after a restart like the hook (SPEC §6). */
  persist: boolean;
  /** ISO 8601 time of firing. */
  firedAt: string;
  trigger: TriggerInfo;
  request: CallbackRequest;
  /** The triggering request's span, when tracing is on (src/tracing/). */
  trace?: TraceRef;
}

/** Where fired events go: the delivery pipeline (durable outbox, retries) in the daemon. */
export interface FiredEventSink {
  accept(events: FiredEvent[]): void;
}
