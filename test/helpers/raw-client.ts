import { connect, type Socket } from 'node:net';

/** A raw TCP client for request-smuggling tests: writes bytes, reads everything that comes back. */
export interface RawClient {
  socket: Socket;
  /** Everything received so far (latin1). */
  received(): string;
  write(s: string): void;
  /** Resolves once what was received satisfies `ok`; rejects after `ms` or when the peer closes first. */
  waitFor(ok: (text: string) => boolean, ms?: number): Promise<string>;
  /** Resolves once the peer closed the connection. */
  closed: Promise<void>;
  close(): void;
}

export function rawClient(url: string): Promise<RawClient> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let text = '';
    let waiters: (() => void)[] = [];
    let ended = false;
    const socket = connect({ host: hostname, port: Number(port) });
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.on('data', (b: Buffer) => {
      text += b.toString('latin1');
      for (const w of waiters) w();
    });
    socket.on('close', () => {
      ended = true;
      for (const w of waiters) w();
    });
    socket.on('error', () => undefined);
    socket.once('connect', () =>
      resolve({
        socket,
        received: () => text,
        write: (s) => socket.write(s, 'latin1'),
        waitFor: (ok, ms = 5000) =>
          new Promise<string>((res, rej) => {
            const check = () => {
              if (ok(text)) {
                done();
                res(text);
              } else if (ended) {
                done();
                rej(new Error(`connection closed; received: ${JSON.stringify(text)}`));
              }
            };
            const timer = setTimeout(() => {
              done();
              rej(new Error(`timed out after ${ms} ms; received: ${JSON.stringify(text)}`));
            }, ms);
            const done = () => {
              clearTimeout(timer);
              waiters = waiters.filter((w) => w !== check);
            };
            waiters.push(check);
            check();
          }),
        closed,
        close: () => socket.destroy(),
      }),
    );
    socket.once('error', reject);
  });
}

/** How many complete HTTP responses (status lines) a raw transcript holds. */
export function statusLines(text: string): string[] {
  return text.match(/HTTP\/1\.1 \d{3}[^\r]*/g) ?? [];
}
