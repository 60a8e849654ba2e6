import { closeServer } from '../ops/index.js';
import type { App } from '../server/index.js';

/**
 * Connections an upgrade took away from the HTTP server (tail and `hookctl listen` clients,
 * proxied WebSocket tunnels): the server's own close does not see them. `close` starts a polite
 * close (a close frame) when the drain begins; `terminate` destroys what is left at the deadline.
 */
export interface UpgradedConnections {
  close?(): Promise<void>;
  terminate(): void;
}

/**
 * Closes the API listener within `drainMs`, whatever the clients do: upgraded clients
 * get their close frame at once, requests in flight are answered, kept-alive connections go as
 * soon as they are idle. When the time is up every connection goes, upgraded ones included (a
 * client that ignored the close frame, an open tunnel), which would otherwise keep hookd running.
 */
export async function drainListener(
  app: App,
  drainMs: number,
  upgraded: readonly UpgradedConnections[],
): Promise<void> {
  const politelyClosed = upgraded.map((u) => u.close?.());
  const server = app.server;
  // hookd listened on the Node server itself (Hookd.listen), so it closes it too.
  const closed = Promise.all([app.fastify.close(), closeServer(server)]);
  // A kept-alive connection that finishes its last response goes at once, not at the deadline.
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  server.closeIdleConnections();
  const timer = setTimeout(() => {
    server.closeAllConnections();
    for (const u of upgraded) u.terminate();
  }, drainMs);
  timer.unref();
  await Promise.all([closed, ...politelyClosed]);
  clearInterval(sweep);
  clearTimeout(timer);
}
