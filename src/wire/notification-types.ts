/** The operational events a notification endpoint can ask for: validated by hookd, offered and suggested by hookctl. */
export const NOTIFICATION_TYPES = [
  'hook.disabled',
  'delivery.failed',
  'endpoint.breaker_opened',
  'endpoint.breaker_closed',
  'hook.certificate_expiring',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** A notification endpoint's fields as the API lists them (what hookd keeps and hookctl shows). */
export interface NotificationEndpointFields {
  Id: string;
  Owner: string;
  Url: string;
  /** Event types it wants; `["*"]` (the default) means all. */
  Events: string[];
  Description: string;
  Created: string;
}

/**
 * Notification endpoint Ids begin `ne_` (hook Ids never do): what tells a notification's delivery
 * from a hook's wherever a delivery is shown, its trigger included.
 */
export function isEndpointId(id: string): boolean {
  return id.startsWith('ne_');
}
