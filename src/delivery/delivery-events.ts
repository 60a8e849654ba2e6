/**
 * The in-process event bus of the delivery side: every fired hook and every attempt, shaped like
 * the live tail's messages (docs/API.md "Live tail"), for the tail and for metrics. Messages are
 * only built when someone listens.
 */
import { isoTimestamp } from '../hook/index.js';
import { withoutPassword } from '../util/index.js';
import { isEndpointId, type TriggerView } from '../wire/index.js';
import { isTestRequest } from './test-event-marker.js';

export type TriggerMessage = TriggerView;

/**
 * A delivery's trigger as the tail, the delivery log and the API show it. A notification's
 * delivery (its source a notification endpoint) names the event it tells of; it is recorded with
 * the event as its path.
 */
export function triggerMessage(
  source: string,
  t: { method: string; path: string; statusCode?: number; user?: string },
): TriggerMessage {
  if (isEndpointId(source)) return { Kind: 'notification', Event: t.path };
  return {
    Kind: 'request',
    Method: t.method,
    Path: t.path,
    StatusCode: t.statusCode ?? null,
    User: t.user ?? null,
  };
}

export interface FiredMessage {
  kind: 'fired';
  Time: string;
  HookId: string;
  DeliveryId: string;
  Trigger: TriggerMessage;
  /** A test event's (the console's "Send a test event"): absent for real traffic. */
  Test?: true;
}

export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed';

export interface AttemptMessage {
  kind: 'attempt';
  Time: string;
  HookId: string;
  DeliveryId: string;
  Attempt: number;
  Method: string;
  Url: string;
  StatusCode: number | null;
  LatencyMs: number;
  Outcome: AttemptOutcome;
  Error: string | null;
  /** A transport other than HTTP: its receipt in words when delivered ("confirmed by …"). */
  Receipt?: string;
  Trigger: TriggerMessage;
  /** A test event's (the console's "Send a test event"): absent for real traffic. */
  Test?: true;
}

/**
 * A destination's circuit breaker opened or closed (circuit-breaker.ts `onTransition`). Not a
 * tail message: operational notifications and logs listen to it. Emitted with owner `''`.
 */
export interface BreakerMessage {
  kind: 'breaker';
  Time: string;
  /** What the breaker guards (a receiver key or an endpoint key: for HTTP the origin or the URL). */
  Endpoint: string;
  Transition: 'opened' | 'closed';
  /** Opened: when the probe attempt goes out. */
  ProbeAt: string | null;
}

export interface DeliveryEventMap {
  fired: FiredMessage;
  attempt: AttemptMessage;
  breaker: BreakerMessage;
}

/** A listener gets the message and the hook's owner (for per-user filtering; not in the message). */
export type DeliveryListener<K extends keyof DeliveryEventMap> = (
  message: DeliveryEventMap[K],
  owner: string,
) => void;

export class DeliveryEvents {
  private readonly lists: { [K in keyof DeliveryEventMap]: DeliveryListener<K>[] } = {
    fired: [],
    attempt: [],
    breaker: [],
  };

  /** Subscribes; returns the function that unsubscribes. */
  on<K extends keyof DeliveryEventMap>(kind: K, listener: DeliveryListener<K>): () => void {
    // Copy on write: emitting iterates the array it started with even if a listener unsubscribes.
    this.set(kind, [...this.list(kind), listener]);
    return () => {
      this.set(
        kind,
        this.list(kind).filter((l) => l !== listener),
      );
    };
  }

  has(kind: keyof DeliveryEventMap): boolean {
    return this.lists[kind].length > 0;
  }

  emit<K extends keyof DeliveryEventMap>(kind: K, message: DeliveryEventMap[K], owner: string): void {
    for (const l of this.list(kind)) {
      try {
        l(message, owner);
      } catch {
        // A listener's bug must not break delivery; listeners report their own errors.
      }
    }
  }

  private list<K extends keyof DeliveryEventMap>(kind: K): DeliveryListener<K>[] {
    return this.lists[kind] as DeliveryListener<K>[];
  }

  private set<K extends keyof DeliveryEventMap>(kind: K, list: DeliveryListener<K>[]): void {
    (this.lists as Record<K, DeliveryListener<K>[]>)[kind] = list;
  }
}

let lastIsoMs = -1;
let lastIso = '';
/** `isoTimestamp` for epoch ms, remembering the last one: events come many per millisecond. */
export function isoTime(ms: number): string {
  if (ms !== lastIsoMs) {
    lastIsoMs = ms;
    lastIso = isoTimestamp(new Date(ms));
  }
  return lastIso;
}

/** What the events need of a delivery (delivery.ts `Delivery`). */
interface EventDelivery {
  id: string;
  hookId: string;
  attempts: number;
  request: { method: string; url: string; headers?: Record<string, string> };
  trigger: Parameters<typeof triggerMessage>[1];
}

const testMark = (d: EventDelivery): { Test?: true } =>
  d.request.headers !== undefined && isTestRequest(d.request.headers) ? { Test: true } : {};

/** The tail's message for a fired callback. */
export function firedMessage(d: EventDelivery, time: string): FiredMessage {
  return {
    kind: 'fired',
    Time: time,
    HookId: d.hookId,
    DeliveryId: d.id,
    Trigger: triggerMessage(d.hookId, d.trigger),
    ...testMark(d),
  };
}

/** The tail's message for an attempt (`d.attempts` counts it). */
export function attemptMessage(
  d: EventDelivery,
  start: number,
  r: { statusCode: number | null; latencyMs: number; error: string | null; responseBody: string | null },
  outcome: AttemptOutcome,
): AttemptMessage {
  const m: AttemptMessage = {
    kind: 'attempt',
    Time: isoTime(start),
    HookId: d.hookId,
    DeliveryId: d.id,
    Attempt: d.attempts,
    Method: d.request.method,
    Url: withoutPassword(d.request.url),
    StatusCode: r.statusCode,
    LatencyMs: r.latencyMs,
    Outcome: outcome,
    Error: r.error,
    Trigger: triggerMessage(d.hookId, d.trigger),
    ...testMark(d),
  };
  // An HTTP answer has its status; another transport's receipt is said in words.
  if (r.statusCode === null && r.responseBody !== null) m.Receipt = r.responseBody;
  return m;
}
