/**
 * What the engine hands to delivery when a hook fires: the rendered callback request, ready to
 * send, and the facts about the trigger that the delivery log and the live tail show. Firing and
 * sending are apart on purpose: the engine decides and renders, delivery makes it durable and
 * sends it.
 */
import type { BodyCopy, FilterInput } from '../filter/index.js';
import type { TraceRef } from '../tracing/index.js';

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
  /**
   * Set when the hook's Transform failed ("Transform: exceeded 50 ms"): the delivery is recorded
   * as failed with this cause and never sent, so that the owner sees it and can redeliver.
   */
  failure?: string;
  /** With `failure`: the event the Transform was given, kept so that a redelivery runs it again. */
  transformInput?: FilterInput;
}

/** Where fired events go: the delivery pipeline (durable outbox, retries) in the daemon. */
export interface FiredEventSink {
  accept(events: FiredEvent[]): void;
}

/** A request that may trigger hooks, as the proxy or the report API saw it. */
export interface Trigger {
  method: string;
  /** Path as received, without the query string. */
  path: string;
  /** Absolute URI; a function so that it is only built when some hook fires. */
  uri: () => string;
  /** The response status: set for the `after` phase. */
  statusCode?: number;
  /**
   * The user who made the request, when already known: a report's `User`, a dry run's. The
   * empty string is an anonymous request.
   */
  user?: string;
  /**
   * Resolves the user of a proxied request (the identity provider), called at most once per
   * firing and only when some hook matched, so that requests no hook watches never pay for it.
   * Present only when a provider is configured; undefined or a rejection mean anonymous.
   */
  requestUser?: () => Promise<string | undefined>;
  /** The request's span when tracing is on: the parent of the fire spans. */
  trace?: TraceRef | undefined;
  /**
   * The request's `CDN-Loop` entries (RFC 8586), carried on by the callbacks it fires so that a
   * chain back into hookd through other systems is counted (src/loops/).
   */
  loop?: string | undefined;
  /**
   * Only this user's hooks may fire: a report by a user without the `report` permission is made
   * by its caller and reaches nobody else's hooks (docs/DECISIONS.md "Reports, identities and
   * listeners"). Absent: every owner's, as for proxied requests.
   */
  onlyOwner?: string;
  /** The request's headers as a filter sees them (lower-case, credentials left out); lazy. */
  headers?: () => Record<string, string>;
  /** The copy of the request body, for the hooks that read it (src/filter/). */
  requestBody?: BodyCopy;
  /** After completion: the response's headers (lazy) and the copy of its body. */
  response?: { headers: () => Record<string, string>; body?: BodyCopy };
  /**
   * BeforeCompletion hooks that read the request body fire once it has arrived: `skip` leaves
   * them out (the request has just arrived), `only` fires just them (its body is complete).
   */
  bodyReaders?: 'skip' | 'only';
}
