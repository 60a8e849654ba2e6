/**
 * An HTTP CONNECT tunnel through the egress proxy to an address the callback target policy has
 * already judged. hookd tunnels to the checked address, not to the name: the proxy then has no
 * name to resolve differently, so the policy's pinning (SPEC §10) holds through the proxy. Plain
 * http:// callbacks are tunnelled too (one path for both schemes); the proxy must allow CONNECT to
 * the callback ports (docs/DECISIONS.md "Delivery semantics").
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { EgressProxy } from './egress-proxy.js';

/** Opens a connection to `address:port` through the proxy; `host` is the callback's `host:port`. */
export type Tunnel = (address: string, port: number, host: string, timeoutMs: number) => Promise<Socket>;

/** The proxy answered CONNECT with something else than 2xx: nothing reached the target. */
export class ProxyRefusedError extends Error {
  // A connection failure of the target's host (sender.ts counts it for the host's breaker).
  readonly code = 'HOOKD_PROXY_REFUSED';
}

const MAX_HEAD = 16 * 1024;

export function connectTunnel(proxy: EgressProxy): Tunnel {
  return (address, port, host, timeoutMs) =>
    new Promise<Socket>((resolve, reject) => {
      const socket: Socket =
        proxy.protocol === 'https:'
          ? tlsConnect({
              host: proxy.host,
              port: proxy.port,
              servername: proxy.host,
              ALPNProtocols: ['http/1.1'],
            })
          : netConnect({ host: proxy.host, port: proxy.port });
      const authority = address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
      let head = Buffer.alloc(0);
      const fail = (err: Error) => {
        clearTimeout(timer);
        socket.destroy();
        reject(err);
      };
      const timer = setTimeout(
        () =>
          fail(
            Object.assign(
              new Error(`the callback proxy ${proxy.display} did not open a tunnel within ${timeoutMs} ms`),
              {
                code: 'UND_ERR_CONNECT_TIMEOUT',
              },
            ),
          ),
        timeoutMs,
      );
      const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) {
          if (head.length > MAX_HEAD)
            fail(
              new ProxyRefusedError(
                `the callback proxy ${proxy.display} sent an oversized answer to CONNECT`,
              ),
            );
          return;
        }
        socket.off('data', onData);
        socket.off('error', fail);
        const status = /^HTTP\/1\.[01] (\d{3})([^\r\n]*)/.exec(head.subarray(0, end).toString('latin1'));
        if (!status || status[1]![0] !== '2') {
          fail(
            new ProxyRefusedError(
              `the callback proxy ${proxy.display} refused CONNECT to ${authority}: ${status ? `${status[1]}${status[2]}` : 'not an HTTP answer'}`,
            ),
          );
          return;
        }
        clearTimeout(timer);
        // Whoever takes the socket (undici, or TLS to the target) starts reading it.
        socket.pause();
        const rest = head.subarray(end + 4);
        if (rest.length > 0) socket.unshift(rest);
        resolve(socket);
      };
      socket.on('data', onData);
      socket.on('error', fail);
      const auth = proxy.authorization ? `Proxy-Authorization: ${proxy.authorization}\r\n` : '';
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${host}\r\n${auth}\r\n`);
    });
}
