import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens and resolves to the base URL (`http://127.0.0.1:8470`, `http://[::1]:8470`). */
export async function listenOn(server: Server, at: { host: string; port: number }): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: at.host, port: at.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return `http://${host}:${addr.port}`;
}

/** Stops accepting; resolves once every connection is gone (a server never listening resolves at once). */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
