import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One callback as a test receiver saw it. */
export interface Call {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** `Date.now()` when the request had fully arrived. */
  at: number;
  /** True once the receiver answered. */
  answered: boolean;
}

/** What the receiver answers: a status (with headers and body), or nothing at all. */
export type Reply = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface Receiver {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  calls: Call[];
  /** Requests received and not answered. */
  outstanding(): number;
  reply: (call: Call, n: number) => Reply;
  /** Resolves once `n` calls have arrived; rejects after `timeoutMs` (a guard, not a measurement). */
  waitFor(n: number, timeoutMs?: number): Promise<Call[]>;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 that records callbacks and answers as `reply` says. */
export async function startReceiver(reply: Receiver['reply'] = () => ({ status: 200 })): Promise<Receiver> {
  const calls: Call[] = [];
  const hanging = new Set<ServerResponse>();
  let waiters: { n: number; resolve: () => void }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      const call: Call = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        at: Date.now(),
        answered: false,
      };
      calls.push(call);
      const r = self.reply(call, calls.length);
      if (r === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
      } else {
        call.answered = true;
        res.writeHead(r.status, r.headers).end(r.body ?? '');
      }
      waiters = waiters.filter((w) => {
        if (calls.length < w.n) return true;
        w.resolve();
        return false;
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const self: Receiver = {
    url: `http://127.0.0.1:${port}`,
    port,
    calls,
    reply,
    outstanding: () => calls.filter((c) => !c.answered).length,
    waitFor(n, timeoutMs = 20_000) {
      if (calls.length >= n) return Promise.resolve(calls);
      return new Promise<Call[]>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${calls.length} of ${n} calls within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve(calls);
          },
        });
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return self;
}

/** Polls `cond` until true; rejects after `timeoutMs` with `what` (a guard against hanging tests). */
export async function until(
  cond: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Waits `ms`: only for asserting that nothing (more) happened. */
export function settle(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
