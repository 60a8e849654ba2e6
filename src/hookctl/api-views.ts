// What the hookd API answers, as hookctl reads it: the types of hookd/client, generated from the
// server's OpenAPI document, under the names hookctl's commands use.
import type {
  BulkRedelivery,
  Delivery,
  Hook,
  HookType,
  HookWithWarnings,
  MatchEntry,
  Secret,
} from '../client/index.js';

/** A stored hook as the API returns it. */
export type HookView = Hook;
/** A create, replace or validate answer: the hook with the lint's `Warnings`. */
export type HookWarningsView = HookWithWarnings;
/** `GET /hooks/{id}/secret` and `POST /hooks/{id}/secret/rotate`. */
export type SecretView = Secret;
/** `POST /hooks/{id}/redeliver`. */
export type BulkRedeliveryView = BulkRedelivery;
export type HookTypeView = HookType;
/** A delivery of the delivery log. */
export type DeliveryView = Delivery;
/** One entry of `POST /_hookd/match`'s answer. */
export type MatchView = MatchEntry;
