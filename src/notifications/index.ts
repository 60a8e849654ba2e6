// The public surface of notifications/: what other folders may import. Everything else is its own.

export { isEndpointId } from './notification-endpoint.js';
export {
  type NotificationStore,
  PgNotificationStore,
  SqliteNotificationStore,
} from './notification-store.js';
export { breakerEvents, Operations } from './operations.js';
