/**
 * A callback receiver with nothing but `http`, in a process of its own so that it never shares an
 * event loop with what is measured: it answers 200 at once, counts, and says when it has seen
 * enough. The cluster and delivery-thread benches count their callbacks with it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { type Agent, request } from 'undici';

const RECEIVER_SOURCE = `
const http = require('node:http');
let count = 0, target = Infinity;
const server = http.createServer({ keepAliveTimeout: 60000 }, (req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 });
    res.end('ok');
    if (++count === target) process.send({ done: count });
  });
});
process.on('message', (m) => {
  if (m.reset) { count = 0; target = Infinity; process.send({ reset: true }); }
  if (m.target) { target = m.target; if (count >= target) process.send({ done: count }); }
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('disconnect', () => process.exit(0));
`;

export interface CountingReceiver {
  url: string;
  child: ChildProcess;
  /** Resolves once `n` callbacks arrived since the last reset. */
  reached(n: number): Promise<void>;
  reset(): Promise<void>;
}

export async function startCountingReceiver(): Promise<CountingReceiver> {
  const child = spawn(process.execPath, ['-e', RECEIVER_SOURCE], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((res, rej) => {
    child.once('message', (m: { port: number }) => res(m.port));
    child.once('exit', (code) => rej(new Error(`receiver exited with ${code}`)));
  });
  const once = <T>(pick: (m: Record<string, unknown>) => T | undefined) =>
    new Promise<T>((res) => {
      const on = (m: Record<string, unknown>) => {
        const v = pick(m);
        if (v !== undefined) {
          child.off('message', on);
          res(v);
        }
      };
      child.on('message', on);
    });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    async reached(n) {
      const p = once((m) => (m.done ? true : undefined));
      child.send({ target: n });
      await p;
    },
    async reset() {
      const p = once((m) => (m.reset ? true : undefined));
      child.send({ reset: true });
      await p;
    },
  };
}

/**
 * Triggers `count` callbacks through `POST /_hookd/report` (batches of `batch`, `inFlight` reports
 * at once per target, round-robin over `targets`) and resolves once all have arrived: the seconds
 * from the first report to the last callback, so recording, sending and recording each outcome.
 */
export async function reportBurst(o: {
  receiver: CountingReceiver;
  targets: readonly string[];
  token: string;
  count: number;
  batch: number;
  inFlight: number;
  path: (i: number) => string;
  post: (url: string, body: string, headers: Record<string, string>) => Promise<number>;
}): Promise<number> {
  await o.receiver.reset();
  const reports = Math.ceil(o.count / o.batch);
  const done = o.receiver.reached(reports * o.batch);
  const headers = { authorization: `Bearer ${o.token}`, 'content-type': 'application/json' };
  const items = (from: number) =>
    JSON.stringify(
      Array.from({ length: o.batch }, (_, i) => ({ Method: 'GET', Path: o.path(from + i), StatusCode: 200 })),
    );
  const t0 = performance.now();
  let next = 0;
  const n = o.targets.length;
  await Promise.all(
    Array.from({ length: n * o.inFlight }, async (_, w) => {
      const target = o.targets[w % n]!;
      for (;;) {
        const r = next++;
        if (r >= reports) return;
        const status = await o.post(`${target}/_hookd/report`, items(r * o.batch), headers);
        if (status !== 202) throw new Error(`report answered ${status}`);
      }
    }),
  );
  await done;
  return (performance.now() - t0) / 1000;
}

/** `reportBurst`'s `post` on an undici agent: the status, the body read and dropped. */
export function postWith(
  agent: Agent,
): (url: string, body: string, headers: Record<string, string>) => Promise<number> {
  return async (url, body, headers) => {
    const res = await request(url, { method: 'POST', headers, body, dispatcher: agent });
    await res.body.dump();
    return res.statusCode;
  };
}

/** Creates the benches' hook on `hookd`: `GET /bench/(*)` fires a callback to `receiver`'s `/bench`. */
export async function createBenchHook(
  hookd: string,
  token: string,
  receiver: string,
  agent: Agent,
): Promise<void> {
  const created = await request(`${hookd}/hooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ PathPattern: '/bench/(*)', Callback: `${receiver}/bench`, Methods: ['GET'] }),
    dispatcher: agent,
  });
  if (created.statusCode !== 201) throw new Error(`creating the hook: ${await created.body.text()}`);
  await created.body.dump();
}
