// What the hookd API answers (docs/API.md), as hookctl reads it.

/** A stored hook as the API returns it (docs/API.md). */
export interface HookView {
  Id: string;
  /** The owner's label for the hook; usable wherever the Id is. */
  Name?: string;
  Owner?: string;
  PathPattern: string;
  Methods: string[];
  Type: number;
  StatusCodeBlackList?: number[];
  StatusCodeWhiteList?: number[];
  Callback: string;
  CallbackMethod?: string;
  CallbackContent?: string;
  CallbackContentMediaType?: string;
  Headers?: Record<string, string>;
  Persist?: boolean;
  Modified?: string;
  State?: string;
  DisabledReason?: string;
  DisabledAt?: string;
  /** Create/replace answers: what the server's lint found (docs/API.md "Warnings"). */
  Warnings?: { Field: string; Message: string }[];
  [field: string]: unknown;
}

/** `GET /hooks/{id}/secret` and `POST /hooks/{id}/secret/rotate`. */
export interface SecretView {
  Secret: string;
  /** `whpk_…`: verifies `v1a` signatures. */
  PublicKey?: string;
  PreviousValidUntil?: string;
}

/** `POST /hooks/{id}/redeliver`. */
export interface BulkRedeliveryView {
  queued: number;
  pending?: number;
  dryRun?: boolean;
}

export interface HookTypeView {
  Type: number;
  Name: string;
  Description?: string;
}

/** A delivery of the delivery log (docs/API.md, "Deliveries"). */
export interface DeliveryView {
  Id: string;
  HookId: string;
  Status: string;
  Attempts: number;
  Created?: string;
  NextAttempt?: string | null;
  LastStatusCode?: number | null;
  LastError?: string | null;
  Trigger?: { Method?: string; Path?: string; StatusCode?: number | null };
  Request?: { Method?: string; Url?: string; ContentType?: string; Body?: string };
  [field: string]: unknown;
}

/** One entry of `POST /match`'s answer. */
export interface MatchView {
  HookId: string;
  Type: number;
  Captures?: string[];
  StatusCodeWhiteList?: number[];
  StatusCodeBlackList?: number[];
  /** No status was given, and the hook's status lists decide whether it fires. */
  NeedsStatus?: boolean;
  Request?: { Method?: string; Url?: string; Headers?: Record<string, string>; Body?: string };
  [field: string]: unknown;
}
