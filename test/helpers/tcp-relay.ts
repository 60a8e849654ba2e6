import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay the test owns, in front of a shared broker: `cut()` drops every connection and
 * refuses new ones (the broker looks unreachable), `restore()` lets them through again. The
 * machine's brokers are shared, so an outage is made here and never by stopping them.
 */
export interface TcpRelay {
  readonly host: string;
  readonly port: number;
  /** Connections accepted so far (a reconnect shows as one more). */
  readonly accepted: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(targetHost: string, targetPort: number): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  let open = true;
  let accepted = 0;
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    accepted++;
    const upstream = connect({ host: targetHost, port: targetPort });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    host: '127.0.0.1',
    port,
    get accepted() {
      return accepted;
    },
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      open = true;
    },
    close: async () => {
      open = false;
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
