// The public surface of notifications/: what other folders may import. Everything else is its own.
export {
  type NotificationStore,
  PgNotificationStore,
  SqliteNotificationStore,
} from './notification-store.js';
export { breakerEvents, Operations } from './operations.js';
