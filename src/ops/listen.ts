import { chmodSync, chownSync, lstatSync, readFileSync, unlinkSync } from 'node:fs';
import type { Server } from 'node:http';
import { type AddressInfo, createConnection } from 'node:net';
import type { ListenAddress } from '../config/config.js';

/** Listens and resolves to the base URL (`http://127.0.0.1:8470`, `http://[::1]:8470`). */
export async function listenOn(server: Server, at: { host: string; port: number }): Promise<string> {
  await listenWith(server, { host: at.host, port: at.port });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return `http://${host}:${addr.port}`;
}

/** The default mode of hookd's socket: the owner and the group (the front proxy's) may connect. */
export const DEFAULT_SOCKET_MODE = 0o660;

/**
 * Where a peer on hookd's unix socket appears to come from: what nginx calls such a peer
 * (`$remote_addr`), never an IP address, so no `--trusted-proxy` range can match it by accident.
 */
export const UNIX_PEER = 'unix:';

/**
 * Listens on a TCP address, or on a unix socket (`{ path }`): `unix:PATH` is the answer then. The
 * socket file gets `mode` (default 0660) and `group` before anyone can connect (the umask is
 * narrowed around the bind), so only the owner and that group, the front proxy's, reach it: a
 * peer on it is trusted as the front proxy. A socket file left by a hookd that died is replaced;
 * one a live process answers on is not (EADDRINUSE).
 */
export async function listenAddress(
  server: Server,
  at: ListenAddress,
  opts: { mode?: number; group?: string } = {},
): Promise<string> {
  if (!('path' in at)) return listenOn(server, at);
  const mode = opts.mode ?? DEFAULT_SOCKET_MODE;
  await removeStaleSocket(at.path);
  const umask = process.umask(0o777 & ~mode);
  try {
    await listenWith(server, { path: at.path });
  } finally {
    process.umask(umask);
  }
  chmodSync(at.path, mode);
  if (opts.group !== undefined) chownSync(at.path, -1, groupId(opts.group));
  server.on('connection', (socket) => {
    // Node has no peer address for a unix socket; the proxy and the trust checks read this one.
    Object.defineProperty(socket, 'remoteAddress', { value: UNIX_PEER, configurable: true });
  });
  return `unix:${at.path}`;
}

/** Stops accepting; resolves once every connection is gone (a server never listening resolves at once). */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

function listenWith(
  server: Server,
  options: { host: string; port: number } | { path: string },
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Removes a socket file nobody answers on; anything else at the path is left for listen to refuse. */
async function removeStaleSocket(path: string): Promise<void> {
  let isSocket = false;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return;
  }
  if (!isSocket) return;
  const alive = await new Promise<boolean>((resolve) => {
    const c = createConnection({ path }, () => {
      c.destroy();
      resolve(true);
    });
    c.on('error', () => resolve(false));
  });
  if (!alive) unlinkSync(path);
}

/** A group given by number or by name (looked up in /etc/group). */
function groupId(group: string): number {
  if (/^\d+$/.test(group)) return Number(group);
  for (const line of readFileSync('/etc/group', 'utf8').split('\n')) {
    const [name, , gid] = line.split(':');
    if (name === group && gid !== undefined && /^\d+$/.test(gid)) return Number(gid);
  }
  throw new Error(`--listen-group: no group "${group}" in /etc/group`);
}
