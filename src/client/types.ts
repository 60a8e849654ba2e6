/**
 * The request and answer types of hookd/client, each named after the server's own schema in the
 * generated `openapi-types.ts`: none is written here, so a change of the served document changes
 * them at the next build.
 */
import type { components, operations } from './openapi-types.js';

type Schemas = components['schemas'];
type JsonBody<Op> = Op extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type JsonAnswer<Op, S extends number> = Op extends {
  responses: { [K in S]: { content: { 'application/json': infer B } } };
}
  ? B
  : never;

/** The RFC 9457 problem document of an error answer. */
export type Problem = Schemas['Problem'];
/** A hook as you send it (create, replace, validate). */
export type HookInput = Schemas['HookInput'];
/** A stored hook as the API shows it. */
export type Hook = Schemas['Hook'];
/** A created, replaced or validated hook, with the lint's warnings. */
export type HookWithWarnings = Schemas['HookWithWarnings'];
export type HookType = Schemas['HookType'];
/** A request the service served (report, match). */
export type ServedRequest = Schemas['ServedRequest'];
export type ReportResult = Schemas['ReportResult'];
/** One hook a matched request would fire, with its rendered callback. */
export type MatchEntry = Schemas['MatchEntry'];
export type Delivery = Schemas['Delivery'];
export type DeliveryWithAttempts = Schemas['DeliveryWithAttempts'];
export type Attempt = Schemas['Attempt'];
export type BulkRedeliveryFilter = Schemas['BulkRedeliveryFilter'];
export type BulkRedelivery = Schemas['BulkRedelivery'];
export type Secret = Schemas['Secret'];
export type User = Schemas['User'];
export type Token = Schemas['Token'];
export type Trigger = Schemas['Trigger'];
/** A frame of the live tail: a fired callback, an attempt, or how many were dropped. */
export type TailEvent = Schemas['TailEvent'];
export type FiredEvent = Schemas['FiredEvent'];
export type AttemptEvent = Schemas['AttemptEvent'];
export type DroppedEvent = Schemas['DroppedEvent'];
export type PortalLinkRequest = JsonBody<operations['postHookdPortalLinks']>;
export type PortalLink = JsonAnswer<operations['postHookdPortalLinks'], 201>;
export type NotificationEndpointInput = JsonBody<operations['postHookdNotifications']>;
export type NotificationEndpoint = JsonAnswer<operations['getHookdNotificationsId'], 200>;
/** A created notification endpoint: its signing secret is in this answer only. */
export type CreatedNotificationEndpoint = JsonAnswer<operations['postHookdNotifications'], 201>;
export type TokenRequest = JsonBody<operations['postHookdUsersNameTokens']>;
export type ReloadResult = JsonAnswer<operations['postHookdReload'], 200>;
/** The filter of a hook's deliveries (`GET /hooks/{id}/deliveries`). */
export type DeliveryFilter = Omit<
  NonNullable<operations['getHooksIdDeliveries']['parameters']['query']>,
  'after' | 'limit'
>;
