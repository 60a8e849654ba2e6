/**
 * A delivery's trigger as the API, the tail, the listen relay and the console show it: the
 * request that fired a hook, or the operational event a notification tells of. A notification
 * is no HTTP request, so it carries no Method or Path to be mistaken for one (NOTIFY is a method a
 * real request can have).
 */
export interface RequestTriggerView {
  Kind: 'request';
  Method: string;
  Path: string;
  StatusCode: number | null;
  /** Who made the request; null: anonymous. */
  User: string | null;
}

export interface NotificationTriggerView {
  Kind: 'notification';
  /** The notification's type: `hook.disabled`, `delivery.failed`… */
  Event: string;
}

export type TriggerView = RequestTriggerView | NotificationTriggerView;
