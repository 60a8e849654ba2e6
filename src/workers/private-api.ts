import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { PEER_HEADER, SECRET_HEADER } from './messages.js';

type Listener = (...args: unknown[]) => void;

/**
 * The primary's API listens on a private loopback port that only its workers may use: a request
 * without the per-boot secret is refused (403, or the upgrade's socket closed). A request that
 * has it gets the client's address, as the worker saw it, as its peer address, so that trusted
 * proxies, identity providers and the console judge the client and not the worker.
 */
export function guardPrivateApi(server: Server, secret: string): void {
  const want = Buffer.from(secret);
  const valid = (given: unknown): boolean => {
    if (typeof given !== 'string') return false;
    const b = Buffer.from(given);
    return b.length === want.length && timingSafeEqual(b, want);
  };
  const admit = (req: IncomingMessage): boolean => {
    const ok = valid(req.headers[SECRET_HEADER]);
    const peer = req.headers[PEER_HEADER];
    delete req.headers[SECRET_HEADER];
    delete req.headers[PEER_HEADER];
    if (!ok) return false;
    // One connection per passed-on request (api-forward.ts): the socket is this client's alone.
    if (typeof peer === 'string' && isIP(peer) !== 0)
      Object.defineProperty(req.socket, 'remoteAddress', { value: peer, configurable: true });
    return true;
  };
  const onRequest = server.listeners('request') as Listener[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!admit(req)) {
      res.writeHead(403, { 'content-type': 'text/plain', connection: 'close' }).end('forbidden\n');
      return;
    }
    for (const l of onRequest) l.call(server, req, res);
  });
  const onUpgrade = server.listeners('upgrade') as Listener[];
  server.removeAllListeners('upgrade');
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!admit(req)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    for (const l of onUpgrade) l.call(server, req, socket, head);
  });
}
