/**
 * `hookctl listen`'s server side: the `/_hookd/listen` WebSocket that relays a user's
 * fired callbacks to their CLI, and the listener attempts it records in the delivery log.
 */
import { isoTimestamp } from '../hook/index.js';
import type { ListenerAttempt } from './listener-attempts.js';

export { type ListenDeps, ListenServer } from './listen-server.js';
export {
  type ListenerAttempt,
  type ListenerAttemptStore,
  MemoryListenerAttempts,
  PgListenerAttempts,
  SqliteListenerAttempts,
} from './listener-attempts.js';
export { type RelayedCallback, relayedCallback } from './relay.js';
export { LISTEN_FEATURE } from './route.js';

/** A listener attempt as an entry of a delivery's `AttemptLog` (docs/API.md): `Via: "listener"`. */
export function presentListenerAttempt(a: ListenerAttempt): Record<string, unknown> {
  return {
    Attempt: a.seq ?? 0,
    Via: 'listener',
    Listener: a.listener,
    Time: isoTimestamp(new Date(a.time)),
    StatusCode: a.statusCode,
    LatencyMs: a.latencyMs,
    Error: a.error,
    ResponseBody: a.responseBody,
  };
}
