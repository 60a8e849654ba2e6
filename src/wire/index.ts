/**
 * Shapes that cross between hookd and hookctl: what the daemon sends and the CLI reads. A room
 * at the bottom that imports nothing, so the CLI (which may import only low rooms) and the
 * features that serve these shapes share one definition instead of each writing its own.
 */
export {
  isEndpointId,
  NOTIFICATION_TYPES,
  type NotificationEndpointFields,
  type NotificationType,
} from './notification-types.js';
export type { RelayedCallback } from './relayed-callback.js';
export type { NotificationTriggerView, RequestTriggerView, TriggerView } from './trigger-view.js';
