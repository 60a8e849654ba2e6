/**
 * What one crossing between threads costs on this machine: the CPU the sender spends on one
 * `postMessage` of a delivery thread's batch (one attempt) when the thread it goes to is asleep in
 * its event loop, and when that thread is awake (messages sent back to back); the thread's own CPU
 * per message in each case; and a bare wake-up (`Atomics.notify` of a thread blocked in
 * `Atomics.wait`), which is what the asleep case pays beyond the awake one. The delivery threads
 * and the SQLite writer pay one of these for every message, so the figures bound what the threads
 * bench can show (docs/BENCHMARKS.md, "What a crossing costs"). CPU per thread is read with
 * `process.threadCpuUsage`, so a busy machine lengthens the run but not the figures much.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/crossing.js [messages=4000] [rounds=3]
 */
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

type ToPeer = { t: 'send'; attempts: unknown[]; reply: boolean } | { t: 'cpu' };

const threadCpuUs = (since?: NodeJS.CpuUsage): number => {
  const u = process.threadCpuUsage(since);
  return u.user + u.system;
};

/** An attempt as the core hands it to a delivery thread (src/executors/wire.ts). */
const attempt = (n: number) => ({
  id: `msg_2Hb${n}xQk7Lr0Nw5d`,
  url: 'http://127.0.0.1:40000/hooks/orders',
  method: 'POST',
  headers: [
    'content-type',
    'application/json',
    'webhook-id',
    `msg_2Hb${n}`,
    'webhook-timestamp',
    '1764806400',
    'webhook-signature',
    'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  ],
  body: JSON.stringify({ event: 'request', method: 'POST', path: `/orders/${n}`, status: 201 }),
  contentType: 'application/json',
  sentAt: Date.now(),
  n,
  protocol: 'http',
});

function peer(): void {
  const port = parentPort;
  if (port === null) return;
  if (workerData === 'futex') {
    const cell = new Int32Array(new SharedArrayBuffer(8));
    port.postMessage(cell.buffer);
    for (;;) {
      Atomics.wait(cell, 0, 0);
      Atomics.store(cell, 0, 0);
      Atomics.store(cell, 1, 1);
    }
  }
  let cpu = 0;
  port.on('message', (m: ToPeer) => {
    if (m.t === 'cpu') {
      port.postMessage(threadCpuUs() - cpu);
      return;
    }
    if (m.reply) port.postMessage(0);
  });
  cpu = threadCpuUs();
}

interface Crossing {
  senderUs: number;
  peerUs: number;
}

const turn = (): Promise<void> => new Promise((r) => setTimeout(r, 0));
const answer = (w: Worker): Promise<unknown> => new Promise((r) => w.once('message', r));

/**
 * One message at a time, each after the thread has answered and gone back to sleep; the thread's
 * figure includes its answer, a crossing the other way.
 */
async function asleep(w: Worker, messages: number): Promise<Crossing> {
  let sender = 0;
  const peer0 = (await peerCpu(w)) as number;
  for (let i = 0; i < messages; i++) {
    await turn();
    const answered = answer(w);
    const c = process.threadCpuUsage();
    w.postMessage({ t: 'send', attempts: [attempt(i)], reply: true } satisfies ToPeer);
    sender += threadCpuUs(c);
    await answered;
  }
  const peerUs = ((await peerCpu(w)) as number) - peer0;
  return { senderUs: sender / messages, peerUs: peerUs / messages };
}

/** Messages back to back: the thread is still draining the last when the next arrives. */
async function awake(w: Worker, messages: number): Promise<Crossing> {
  const peer0 = (await peerCpu(w)) as number;
  const batch = Array.from({ length: messages }, (_, i) => attempt(i));
  const c = process.threadCpuUsage();
  for (let i = 0; i < messages; i++)
    w.postMessage({ t: 'send', attempts: [batch[i]], reply: false } satisfies ToPeer);
  const sender = threadCpuUs(c);
  const peerUs = ((await peerCpu(w)) as number) - peer0;
  return { senderUs: sender / messages, peerUs: peerUs / messages };
}

function peerCpu(w: Worker): Promise<unknown> {
  const a = answer(w);
  w.postMessage({ t: 'cpu' } satisfies ToPeer);
  return a;
}

async function futexWake(messages: number): Promise<number> {
  const w = new Worker(fileURLToPath(import.meta.url), { workerData: 'futex' });
  const cell = new Int32Array((await answer(w)) as SharedArrayBuffer);
  let cpu = 0;
  for (let i = 0; i < messages; i++) {
    await turn();
    Atomics.store(cell, 1, 0);
    const c = process.threadCpuUsage();
    Atomics.store(cell, 0, 1);
    Atomics.notify(cell, 0);
    cpu += threadCpuUs(c);
    while (Atomics.load(cell, 1) === 0) {
      // The thread has woken when it sets the second cell.
    }
  }
  await w.terminate();
  return cpu / messages;
}

async function main(): Promise<void> {
  const messages = Number(process.argv[2] ?? 4000);
  const rounds = Number(process.argv[3] ?? 3);
  const rows: { asleep: Crossing; awake: Crossing; wake: number }[] = [];
  for (let r = 0; r < rounds; r++) {
    const w = new Worker(fileURLToPath(import.meta.url));
    const a = await asleep(w, messages);
    const b = await awake(w, messages * 5);
    await w.terminate();
    rows.push({ asleep: a, awake: b, wake: await futexWake(messages) });
  }
  const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const f = (xs: number[]): string => `${median(xs).toFixed(1)} (${xs.map((x) => x.toFixed(1)).join(' ')})`;
  console.log(`crossing, µs of CPU per message, median (rounds), ${messages} messages a round:`);
  console.log(
    `  postMessage to a thread asleep: sender ${f(rows.map((r) => r.asleep.senderUs))}, thread ${f(rows.map((r) => r.asleep.peerUs))}`,
  );
  console.log(
    `  postMessage to a thread awake:  sender ${f(rows.map((r) => r.awake.senderUs))}, thread ${f(rows.map((r) => r.awake.peerUs))}`,
  );
  console.log(`  Atomics.notify of a thread in Atomics.wait: waker ${f(rows.map((r) => r.wake))}`);
}

if (isMainThread) await main();
else peer();
