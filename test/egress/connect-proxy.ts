import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type Socket } from 'node:net';

/** One CONNECT request as the test proxy saw it. */
export interface ProxyRequest {
  target: string;
  authorization: string | undefined;
  /** The local port of the proxy's own connection to the target (what the receiver sees as the peer). */
  upstreamPort?: number;
}

export interface ConnectProxy {
  url: string;
  port: number;
  requests: ProxyRequest[];
  /** `tunnel` (default), or answer every CONNECT with this status. */
  mode: 'tunnel' | 403 | 407;
  close(): Promise<void>;
}

/**
 * A small HTTP CONNECT proxy (RFC 9110 §9.3.6) written for the tests: it records every tunnel
 * asked for and, in `tunnel` mode, pipes bytes both ways. `auth`: the one `Proxy-Authorization`
 * it accepts (407 otherwise).
 */
export async function startConnectProxy(opts: { host?: string; auth?: string } = {}): Promise<ConnectProxy> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      client.off('data', onData);
      const lines = head.subarray(0, end).toString('latin1').split('\r\n');
      const [method, target] = lines[0]!.split(' ');
      const auth = lines.find((l) => /^proxy-authorization:/i.test(l))?.replace(/^[^:]*:\s*/, '');
      const seen: ProxyRequest = { target: target ?? '', authorization: auth };
      self.requests.push(seen);
      if (method !== 'CONNECT') return void client.end('HTTP/1.1 405 Method Not Allowed\r\n\r\n');
      if (opts.auth !== undefined && auth !== opts.auth)
        return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n');
      if (self.mode !== 'tunnel') return void client.end(`HTTP/1.1 ${self.mode} Refused\r\n\r\n`);
      const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(seen.target)!;
      const upstream = connect({ host: m[1]!, port: Number(m[2]) }, () => {
        seen.upstreamPort = upstream.localPort;
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        const rest = head.subarray(end + 4);
        if (rest.length > 0) upstream.write(rest);
        client.pipe(upstream).pipe(client);
      });
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      upstream.on('error', () => client.destroy());
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, opts.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const self: ConnectProxy = {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    port,
    requests: [],
    mode: 'tunnel',
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return self;
}
