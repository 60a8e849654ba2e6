import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP forwarder to another address: hookd under another name, as behind a load balancer or a
 * DNS alias. Every byte goes through unchanged.
 */
export interface Forwarder {
  url: string;
  close(): Promise<void>;
}

export async function startForwarder(target: string): Promise<Forwarder> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect({ host: hostname, port: Number(port) });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
