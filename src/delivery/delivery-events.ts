/**
 * The in-process event bus of the delivery side: every fired hook and every attempt, shaped like
 * the live tail's messages (docs/API.md "Live tail"), for the tail and for metrics. Messages are
 * only built when someone listens.
 */

export interface TriggerMessage {
  Method: string;
  Path: string;
  StatusCode: number | null;
  /** Who made the request; null: anonymous. */
  User: string | null;
}

/** A delivery's trigger as the tail, the delivery log and the API show it. */
export function triggerMessage(t: {
  method: string;
  path: string;
  statusCode?: number;
  user?: string;
}): TriggerMessage {
  return { Method: t.method, Path: t.path, StatusCode: t.statusCode ?? null, User: t.user ?? null };
}

export interface FiredMessage {
  kind: 'fired';
  Time: string;
  HookId: string;
  DeliveryId: string;
  Trigger: TriggerMessage;
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
  Trigger: TriggerMessage;
}

export interface DeliveryEventMap {
  fired: FiredMessage;
  attempt: AttemptMessage;
}

/** A listener gets the message and the hook's owner (for per-user filtering; not in the message). */
export type DeliveryListener<K extends keyof DeliveryEventMap> = (
  message: DeliveryEventMap[K],
  owner: string,
) => void;

export class DeliveryEvents {
  private fired: DeliveryListener<'fired'>[] = [];
  private attempt: DeliveryListener<'attempt'>[] = [];

  /** Subscribes; returns the function that unsubscribes. */
  on<K extends keyof DeliveryEventMap>(kind: K, listener: DeliveryListener<K>): () => void {
    const list = this.list(kind) as DeliveryListener<K>[];
    // Copy on write: emitting iterates the array it started with even if a listener unsubscribes.
    this.set(kind, [...list, listener]);
    return () => {
      this.set(
        kind,
        (this.list(kind) as DeliveryListener<K>[]).filter((l) => l !== listener),
      );
    };
  }

  has(kind: keyof DeliveryEventMap): boolean {
    return this.list(kind).length > 0;
  }

  emit<K extends keyof DeliveryEventMap>(kind: K, message: DeliveryEventMap[K], owner: string): void {
    for (const l of this.list(kind) as DeliveryListener<K>[]) {
      try {
        l(message, owner);
      } catch {
        // A listener's bug must not break delivery; listeners report their own errors.
      }
    }
  }

  private list(kind: keyof DeliveryEventMap): DeliveryListener<never>[] {
    return (kind === 'fired' ? this.fired : this.attempt) as DeliveryListener<never>[];
  }

  private set(kind: keyof DeliveryEventMap, list: unknown[]): void {
    if (kind === 'fired') this.fired = list as DeliveryListener<'fired'>[];
    else this.attempt = list as DeliveryListener<'attempt'>[];
  }
}
