import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import type { ListenAddress } from '../config/index.js';
import { closeServer, listenAddress, listenOn } from '../ops/index.js';

/**
 * The public listener with workers (docs/DECISIONS.md "Workers: own sockets"). On TCP each worker
 * binds a socket of its own with SO_REUSEPORT, so the kernel hands a connection only to a socket
 * that is listening, and a killed worker's socket, with the connections queued on it (reset), is
 * gone with the process. The cluster's shared handle instead let the primary hand one connection
 * to a worker already dead, which nobody answered. A unix socket cannot be shared that way: there
 * the primary's handle stays.
 */

/**
 * Binds the TCP address once without SO_REUSEPORT and lets it go: the port the workers then bind
 * (port 0 made concrete, one port for all), and the same EADDRINUSE as one process would get if
 * anything, another hookd with workers included, listens there already. Unix sockets pass as is.
 */
export async function claimPublicAddress(at: ListenAddress): Promise<ListenAddress> {
  if ('path' in at) return at;
  const probe = createServer();
  const url = await listenOn(probe, at);
  await closeServer(probe);
  return { host: at.host, port: Number(new URL(url).port) };
}

/** A worker's listen: its own SO_REUSEPORT socket on TCP, the shared handle where that cannot be. */
export async function listenPublic(
  server: Server,
  at: ListenAddress,
  opts: { mode?: number; group?: string },
  log: Logger,
): Promise<string> {
  if ('path' in at) return listenAddress(server, at, opts);
  try {
    return await listenAddress(server, at, { ...opts, reusePort: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
    log.warn('SO_REUSEPORT not supported here: workers share the primary socket');
    return listenAddress(server, at, opts);
  }
}
