import type { PortalEvent } from './sessions.js';

/**
 * The events the embedding page is told of (`window.parent.postMessage`, docs/API.md "Portal"):
 * what a successful portal route did. A redirect's event waits for the next page (`pending`); an
 * htmx answer's goes out with it (the `HX-Trigger` header, which portal.js relays).
 */
const AFTER_REDIRECT: Record<string, string> = {
  'POST /hooks': 'hookd:hook-created',
  'POST /hooks/:id': 'hookd:hook-updated',
  'POST /hooks/:id/delete': 'hookd:hook-deleted',
};
const WITH_ANSWER: Record<string, string> = {
  'POST /hooks/:id/secret/rotate': 'hookd:secret-rotated',
  'POST /hooks/:id/test': 'hookd:test-event-sent',
  'POST /hooks/:id/redeliver': 'hookd:redelivered',
  'POST /deliveries/:id/redeliver': 'hookd:redelivered',
};

/** The event of a route's answer, and whether it waits for the next page; undefined: none. */
export function eventOf(
  route: string,
  status: number,
  params: { id?: string },
  location: string | undefined,
): { event: PortalEvent; later: boolean } | undefined {
  const later = AFTER_REDIRECT[route];
  if (later && status === 303) {
    // A created hook's Id is the last segment of where the answer sends the browser.
    const id = route === 'POST /hooks' ? decodeURIComponent(location?.split('/').pop() ?? '') : params.id;
    return { event: { type: later, ...(id && { hookId: id }) }, later: true };
  }
  const now = WITH_ANSWER[route];
  if (now && status === 200) {
    const key = route.startsWith('POST /deliveries') ? 'deliveryId' : 'hookId';
    return { event: { type: now, ...(params.id && { [key]: params.id }) }, later: false };
  }
  return undefined;
}
