import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import type { AttemptMessage } from '../../src/delivery/delivery-events.js';
import { DeliveryPipeline, type DeliveryPipelineOptions } from '../../src/delivery/pipeline.js';
import { DEFAULT_PLAN, type DeliveryPlan, samePlanForAll } from '../../src/delivery/plan/index.js';
import type { FiredEvent } from '../../src/engine/fired-event.js';
import { DeliveryThreads } from '../../src/executors/index.js';
import { AddressPolicy } from '../../src/policy/address-policy.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { SendOutcome, TransportAttempt } from '../../src/transports/index.js';
import { until } from '../helpers/until.js';

const LOOPBACK = ['127.0.0.0/8'];
const FAST = { delaysMs: [0, 50, 100, 200], jitter: 0 };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** One request as the receiver saw it: which delivery, on which connection, answered or cut. */
interface Arrival {
  id: string;
  path: string;
  socket: Socket;
  answered: boolean;
  /** The connection closed before the answer was written. */
  cut: boolean;
}

/** A real HTTP receiver that answers after `delayMs` and counts what is in flight at once. */
async function receiver(delayMs: (path: string) => number) {
  const arrivals: Arrival[] = [];
  // Each connection's arrivals not yet answered: a close cuts them.
  const open = new Map<Socket, Set<Arrival>>();
  const closedAt = new Map<Socket, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const a: Arrival = {
      id: String(req.headers['webhook-id']),
      path: req.url ?? '',
      socket: req.socket,
      answered: false,
      cut: false,
    };
    arrivals.push(a);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let waiting = open.get(req.socket);
    if (waiting === undefined) {
      const set = new Set<Arrival>();
      waiting = set;
      open.set(req.socket, set);
      req.socket.once('close', () => {
        closedAt.set(req.socket, performance.now());
        for (const w of set) w.cut = true;
        inFlight -= set.size;
        open.delete(req.socket);
      });
    }
    waiting.add(a);
    req.resume();
    req.on('end', () => {
      setTimeout(() => {
        if (req.socket.destroyed) return;
        a.answered = true;
        inFlight--;
        waiting.delete(a);
        res.writeHead(204).end();
      }, delayMs(a.path));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, arrivals, closedAt, maxInFlight: () => maxInFlight };
}

function event(url: string, path = '/r/1'): FiredEvent {
  return {
    hookId: 'hk_threads',
    owner: 'alice',
    hookType: 1,
    persist: true,
    firedAt: new Date().toISOString(),
    trigger: { method: 'POST', path, statusCode: 200 },
    request: { method: 'POST', url, headers: { 'content-type': 'application/json' }, body: '{"n":1}' },
  };
}

/** A started pipeline on a real SQLite file whose attempts go out on `threads`. */
async function pipelineOn(
  threads: DeliveryThreads,
  over: Partial<DeliveryPipelineOptions> = {},
  plan: DeliveryPlan = DEFAULT_PLAN,
) {
  const dir = mkdtempSync(join(tmpdir(), 'hookd-threads-'));
  const store = new SqliteStore(join(dir, 'hookd.db'));
  const durable = new SqliteDeliveryStore(store.db);
  const pipeline = new DeliveryPipeline({
    stores: { durable, ephemeral: new MemoryDeliveryStore() },
    send: { policy: new AddressPolicy(LOOPBACK), threads },
    schedule: FAST,
    plans: samePlanForAll(plan),
    ...over,
  });
  const attempts: AttemptMessage[] = [];
  pipeline.events.on('attempt', (m) => attempts.push(m));
  cleanups.push(async () => {
    await pipeline.close(100);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await pipeline.start();
  return { pipeline, durable, attempts };
}

describe('delivery threads', () => {
  it('send every attempt on the threads, spread over them, under the policy each thread holds', async () => {
    const r = await receiver(() => 5);
    // No net allowed at first: loopback is refused by the threads' own address policy.
    const threads = new DeliveryThreads({ count: 2, allowCallbackNets: [] });
    const { pipeline, attempts } = await pipelineOn(threads);
    pipeline.accept([event(`${r.url}/denied`)]);
    await until('the denied attempt', () => attempts.length === 1);
    assert.equal(r.arrivals.length, 0, 'nothing reached the receiver');
    assert.match(String(attempts[0]?.Error), /127\.0\.0\.1/);

    threads.setAllowedNets(LOOPBACK);
    const n = 200;
    pipeline.accept(Array.from({ length: n }, (_, i) => event(`${r.url}/ok/${i}`)));
    await until(
      'every delivery answered',
      () => r.arrivals.filter((a) => a.path.startsWith('/ok/')).length >= n,
    );
    await until('no attempt in flight', () => pipeline.stats().inFlight === 0);
    const stats = threads.stats();
    assert.equal(stats.running, 2);
    assert.equal(stats.configured, 2);
    const sent = stats.threads.map((t) => t.attempts);
    assert.ok(
      sent.every((s) => s > 0),
      `both threads sent: ${sent.join(', ')}`,
    );
    assert.ok(sent.reduce((a, b) => a + b, 0) >= n + 1);
    assert.ok(stats.threads.every((t) => t.busySeconds > 0));
  });

  it('replace a thread killed mid-burst: every delivery arrives, twice only those cut in flight', async () => {
    const r = await receiver(() => 20);
    const threads = new DeliveryThreads({ count: 2, allowCallbackNets: LOOPBACK });
    const { pipeline, durable } = await pipelineOn(threads, { limits: { perHost: 16, perEndpoint: 16 } });
    const n = 300;
    pipeline.accept(Array.from({ length: n }, (_, i) => event(`${r.url}/burst/${i}`)));
    await until('a third of the burst received', () => r.arrivals.length >= n / 3);
    const killedAt = performance.now();
    await threads.terminate(0);
    await until('every delivery succeeded', async () => {
      const rows = await durable.listDeliveries('hk_threads', { limit: 1000 });
      return rows.length === n && rows.every((d) => d.status === 'succeeded');
    });
    const byId = new Map<string, Arrival[]>();
    for (const a of r.arrivals) byId.set(a.id, [...(byId.get(a.id) ?? []), a]);
    const rows = await durable.listDeliveries('hk_threads', { limit: 1000 });
    for (const d of rows) assert.ok(byId.has(d.id), `delivery ${d.id} arrived under its own webhook-id`);
    // The killed thread's connections are the ones that closed at the kill: the others stay
    // open (keep-alive) until the test ends.
    const killed = new Set(
      [...r.closedAt].filter(([, t]) => t >= killedAt && t < killedAt + 2000).map(([s]) => s),
    );
    assert.ok(killed.size > 0, "the kill closed the thread's connections");
    for (const [id, seen] of byId) {
      if (seen.length === 1) continue;
      assert.equal(seen.length, 2, `${id} arrived at most twice`);
      const first = seen[0]!;
      assert.ok(
        killed.has(first.socket) && !killed.has(seen[1]!.socket),
        `${id} arrived twice only because its first attempt was in flight on the killed thread`,
      );
    }
    // Each delivery counts one attempt: the one the dead thread had in flight was sent again.
    assert.ok(
      rows.every((d) => d.attempts === 1),
      'no attempt recorded as failed',
    );
    await until('the thread replaced', () => threads.stats().running === 2);
  });

  it("hold a receiver's limit across four threads, and each key's order", async () => {
    const r = await receiver(() => 3 + Math.floor(Math.random() * 8));
    const threads = new DeliveryThreads({ count: 4, allowCallbackNets: LOOPBACK });
    const ordered: DeliveryPlan = { ...DEFAULT_PLAN, orderingKey: (t) => t.path.split('/')[2] };
    const { pipeline } = await pipelineOn(
      threads,
      { limits: { perHost: 3, perEndpoint: 3, adaptive: false } },
      ordered,
    );
    const keys = 6;
    const each = 20;
    const events: FiredEvent[] = [];
    for (let i = 0; i < each; i++) {
      for (let k = 0; k < keys; k++) events.push(event(`${r.url}/k/${k}/${i}`, `/r/${k}/${i}`));
    }
    pipeline.accept(events);
    await until('every delivery answered', () => r.arrivals.filter((a) => a.answered).length === keys * each);
    assert.equal(r.maxInFlight(), 3, 'at most the limit in flight at once, and the limit reached');
    for (let k = 0; k < keys; k++) {
      const seq = r.arrivals
        .filter((a) => a.path.startsWith(`/k/${k}/`))
        .map((a) => Number(a.path.split('/')[3]));
      assert.deepEqual(
        seq,
        Array.from({ length: each }, (_, i) => i),
        `key ${k} in order`,
      );
    }
    assert.ok(
      threads.stats().threads.filter((t) => t.attempts > 0).length >= 2,
      'the attempts went out on several threads',
    );
  });

  it("put one turn's attempts on one thread, up to 32, and the next turn's on the least busy", async () => {
    const r = await receiver(() => 300);
    const threads = new DeliveryThreads({ count: 2, allowCallbackNets: LOOPBACK });
    const sender = threads.open({
      timeoutMs: 5000,
      connectTimeoutMs: 2000,
      perReceiver: 64,
      log: () => undefined,
    });
    cleanups.push(() => sender.close());
    await until('both threads running', () => threads.stats().running === 2);
    const attempt = (i: number): TransportAttempt => ({
      id: `msg_turn_${i}`,
      url: `${r.url}/turn/${i}`,
      method: 'POST',
      headers: ['content-type', 'application/json'],
      body: '{}',
      contentType: 'application/json',
      sentAt: Date.now(),
    });
    const sentBy = () => threads.stats().threads.map((t) => t.attempts);
    const answers: Promise<SendOutcome>[] = [];
    const turn = (from: number, count: number) => {
      for (let i = from; i < from + count; i++) answers.push(sender.send('http:', attempt(i)));
    };

    turn(0, 10);
    const first = sentBy();
    assert.deepEqual(
      [...first].sort((a, b) => a - b),
      [0, 10],
      `one thread took the turn: ${first}`,
    );
    await new Promise((resolve) => setImmediate(resolve));
    // The first thread still has its 10 in flight: the next turn goes to the other.
    turn(10, 10);
    assert.deepEqual(sentBy(), [10, 10]);
    await new Promise((resolve) => setImmediate(resolve));
    // A turn larger than one thread's share: 32 join the least busy, the rest the other.
    turn(20, 40);
    assert.deepEqual(
      [...sentBy()].sort((a, b) => a - b),
      [18, 42],
    );

    const outcomes = await Promise.all(answers);
    assert.equal(outcomes.filter((o) => o.kind === 'delivered').length, 60);
    assert.equal(new Set(r.arrivals.map((a) => a.path)).size, 60);
  });
});
