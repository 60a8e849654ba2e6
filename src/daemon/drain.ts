import { closeServer } from '../ops/listen.js';
import type { App } from '../server/app.js';
import type { ReverseProxy } from '../server/proxy.js';
import type { TailServer } from '../server/tail.js';

/**
 * Closes the API listener within `drainMs`, whatever the clients do (issue 27): tail clients get
 * their close frame at once, requests in flight are answered, kept-alive connections go as soon
 * as they are idle. When the time is up every connection goes, and so do the connections an
 * upgrade took away from the HTTP server (tail and listen clients that ignored the close frame, proxied
 * WebSocket tunnels: a close frame, then destroyed), which would otherwise keep hookd running.
 */
export async function drainListener(
  app: App,
  drainMs: number,
  upgraded: {
    tail: TailServer;
    proxy: ReverseProxy | undefined;
    /** `hookctl listen` relays (issue 26): upgraded off the same server, closed like the tail. */
    listen?: { close(): Promise<void>; terminate(): void };
  },
): Promise<void> {
  const tailClosed = upgraded.tail.close();
  const listenClosed = upgraded.listen?.close();
  const server = app.server;
  // hookd listened on the Node server itself (Hookd.listen), so it closes it too.
  const closed = Promise.all([app.fastify.close(), closeServer(server)]);
  // A kept-alive connection that finishes its last response goes at once, not at the deadline.
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  server.closeIdleConnections();
  const timer = setTimeout(() => {
    server.closeAllConnections();
    upgraded.tail.terminate();
    upgraded.listen?.terminate();
    upgraded.proxy?.closeTunnels();
  }, drainMs);
  timer.unref();
  await Promise.all([closed, tailClosed, listenClosed]);
  clearInterval(sweep);
  clearTimeout(timer);
}
