import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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
 * Listens and resolves to the base URL (`http://127.0.0.1:8470`, `http://[::1]:8470`). A taken or
 * forbidden address fails with a message naming the listener and the option that moves it: with
 * three listeners, "EADDRINUSE 127.0.0.1:8471" alone leaves a newcomer guessing which one.
 */
export async function listenOn(
  server: Server,
  at: { host: string; port: number },
  name: ListenerName = MAIN,
): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    const fail = (err: NodeJS.ErrnoException) => reject(explainListenError(err, at, name));
    server.once('error', fail);
    server.listen({ host: at.host, port: at.port }, () => {
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

/** Stops accepting; resolves once every connection is gone (a server never listening resolves at once). */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
