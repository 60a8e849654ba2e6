import { chmodSync, chownSync, lstatSync, readFileSync, unlinkSync } from 'node:fs';
import type { Server } from 'node:http';
import { type AddressInfo, createConnection } from 'node:net';
import type { ListenAddress } from '../config/index.js';

/** Which of hookd's listeners a server is, for the message when its address cannot be had. */
export interface ListenerName {
  /** E.g. "the operations listener". */
  what: string;
  /** The option that sets its address, e.g. "--ops-listen". */
  flag: string;
  /** Whether `FLAG off` turns it off. */
  canTurnOff?: boolean;
}

const MAIN: ListenerName = { what: 'the API and proxy listener', flag: '--listen' };

/**
 * `reusePort`: bind a socket of this process's own with SO_REUSEPORT, next to the other workers'
 * on the same port; the kernel spreads connections over the listening sockets, and a dead
 * worker's socket goes with it (docs/DECISIONS.md "Workers: own sockets"). TCP only.
 */
export interface TcpSharing {
  reusePort?: boolean;
}

/**
 * Listens and resolves to the base URL (`http://127.0.0.1:8470`, `http://[::1]:8470`). A taken or
 * forbidden address fails with a message naming the listener and the option that moves it: with
 * three listeners, "EADDRINUSE 127.0.0.1:8471" alone leaves a newcomer guessing which one.
 */
export async function listenOn(
  server: Server,
  at: { host: string; port: number },
  name: ListenerName = MAIN,
  share: TcpSharing = {},
): Promise<string> {
  // A socket of this process's own (`exclusive`), never the cluster primary's shared handle.
  const own = share.reusePort ? { reusePort: true, exclusive: true } : {};
  await new Promise<void>((resolve, reject) => {
    const fail = (err: NodeJS.ErrnoException) => reject(explainListenError(err, at, name));
    server.once('error', fail);
    server.listen({ host: at.host, port: at.port, ...own }, () => {
      server.off('error', fail);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return `http://${host}:${addr.port}`;
}

/** The same error (code kept), its message saying which listener and what to do. */
export function explainListenError(
  err: NodeJS.ErrnoException,
  at: { host: string; port: number },
  name: ListenerName,
): NodeJS.ErrnoException {
  const address = `${at.host.includes(':') ? `[${at.host}]` : at.host}:${at.port}`;
  const off = name.canTurnOff ? ` (or ${name.flag} off)` : '';
  let message: string;
  if (err.code === 'EADDRINUSE')
    message = `${name.what}'s address ${address} is in use (EADDRINUSE): another program (another hookd?) listens there; give it another with ${name.flag} HOST:PORT${off}`;
  else if (err.code === 'EACCES')
    message = `${name.what} may not listen on ${address} (EACCES: ports below 1024 need privileges); give it another with ${name.flag} HOST:PORT${off}`;
  else if (err.code === 'EADDRNOTAVAIL')
    message = `${name.what}'s address ${address} is not an address of this machine (EADDRNOTAVAIL); give it another with ${name.flag} HOST:PORT${off}`;
  else return err;
  const out = new Error(message) as NodeJS.ErrnoException;
  if (err.code !== undefined) out.code = err.code;
  return out;
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
  opts: { mode?: number; group?: string } & TcpSharing = {},
  name: ListenerName = MAIN,
): Promise<string> {
  if (!('path' in at)) return listenOn(server, at, name, opts);
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
