import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { KeyQueues, type OrderedItem } from '../../src/ordering/index.js';
import { api, spawnHookd, startHookd } from '../helpers/hookd.js';
import { until } from '../helpers/until.js';

// Ordered delivery per key. The receiver records every arrival (`A-3`: key A, 3rd
// fired) and fails A-3 twice; A's deliveries must arrive in trigger order with A-4 onwards held
// until A-3 succeeds, while B's go meanwhile.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Arrival {
  name: string;
  status: number;
}

/**
 * Records every arrival and, per key, the most deliveries it had in flight at once: each answer
 * waits `holdMs`, so a second delivery of a key sent before the first was answered is counted.
 */
async function orderReceiver(
  failTimes: Record<string, number>,
  holdMs = 0,
): Promise<{ url: string; arrivals: Arrival[]; maxInFlight: Map<string, number> }> {
  const arrivals: Arrival[] = [];
  const failed: Record<string, number> = {};
  const inFlight = new Map<string, number>();
  const maxInFlight = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      const key = body.split('-')[0]!;
      const now = (inFlight.get(key) ?? 0) + 1;
      inFlight.set(key, now);
      maxInFlight.set(key, Math.max(now, maxInFlight.get(key) ?? 0));
      const f = (failed[body] ?? 0) < (failTimes[body] ?? 0);
      if (f) failed[body] = (failed[body] ?? 0) + 1;
      arrivals.push({ name: body, status: f ? 500 : 200 });
      setTimeout(() => {
        inFlight.set(key, (inFlight.get(key) ?? 1) - 1);
        res.writeHead(f ? 500 : 200).end();
      }, holdMs);
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
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, arrivals, maxInFlight };
}

const HOOK = (url: string) => ({
  PathPattern: '/ord/(*)/(*)',
  Methods: ['GET'],
  Type: 1,
  Callback: `${url}/ord`,
  CallbackContent: '$1-$2',
  CallbackContentMediaType: 'text/plain',
  Ordering: { Key: '$1' },
  // Two retries 1.5 s apart: long enough to read the held state in the delivery log.
  RetrySchedule: [0, 1.5, 1.5, 1.5],
});

const fire = (names: string[]) =>
  names.map((n) => ({ Method: 'GET', Path: `/ord/${n.replace('-', '/')}`, StatusCode: 200, Phase: 'after' }));

const successes = (arrivals: Arrival[], key: string) =>
  arrivals.filter((a) => a.status === 200 && a.name.startsWith(`${key}-`)).map((a) => a.name);
const ofKey = (arrivals: Arrival[], key: string) =>
  arrivals.filter((a) => a.name.startsWith(`${key}-`)).map((a) => a.name);

describe('ordered delivery per key (daemon)', () => {
  it("A's deliveries arrive in trigger order, a failing head holds its key only; the log and metrics say so", async () => {
    const rcv = await orderReceiver({ 'A-3': 2 }, 25);
    const d = await startHookd();
    cleanups.push(() => d.close());
    const hook = await api<{ Id: string; Ordering: unknown }>(
      d.url,
      d.token,
      'POST',
      '/hooks',
      HOOK(rcv.url),
    );
    assert.equal(hook.status, 201, hook.text);
    assert.deepEqual(hook.body.Ordering, { Key: '$1' });
    const names = ['A-1', 'B-1', 'A-2', 'A-3', 'B-2', 'A-4', 'A-5', 'B-3', 'A-6'];
    const r = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', fire(names));
    assert.equal(r.body.fired, names.length, r.text);

    // While A-3 waits for its retry, A-4 is held behind it (delivery log) and the key counts (metrics).
    // B's last delivery must have been sent too: until then B-3 waits behind B-2 in flight, a second
    // head that is ordinary ordering, not A's failure.
    await until(
      'the first failure of A-3, and B-3 sent',
      () =>
        rcv.arrivals.some((a) => a.name === 'A-3' && a.status === 500) &&
        rcv.arrivals.some((a) => a.name === 'B-3'),
    );
    const list = await api<{ Id: string; HeldBehind?: string; Status: string }[]>(
      d.url,
      d.token,
      'GET',
      `/hooks/${hook.body.Id}/deliveries?status=pending`,
    );
    const held = list.body.filter((x) => x.HeldBehind !== undefined);
    assert.ok(held.length >= 1, `some delivery is held: ${list.text}`);
    const heads = new Set(held.map((x) => x.HeldBehind));
    assert.equal(heads.size, 1, 'all behind one head (A-3)');
    const metrics = await (await fetch(`${d.opsUrl}/metrics`)).text();
    assert.match(metrics, /^hookd_ordering_held_keys 1$/m);
    // The deliveries behind A-3 (A-4 onwards, those already in) are counted one by one.
    const heldDeliveries = Number(/^hookd_ordering_held_deliveries (\d+)$/m.exec(metrics)?.[1]);
    assert.ok(heldDeliveries >= 1 && heldDeliveries <= 3, `hookd_ordering_held_deliveries ${heldDeliveries}`);

    await until(
      'all',
      () => successes(rcv.arrivals, 'A').length === 6 && successes(rcv.arrivals, 'B').length === 3,
      30_000,
    );
    assert.deepEqual(ofKey(rcv.arrivals, 'A'), ['A-1', 'A-2', 'A-3', 'A-3', 'A-3', 'A-4', 'A-5', 'A-6']);
    assert.deepEqual(successes(rcv.arrivals, 'B'), ['B-1', 'B-2', 'B-3']);
    await until('nothing held any more', async () =>
      /^hookd_ordering_held_deliveries 0$/m.test(await (await fetch(`${d.opsUrl}/metrics`)).text()),
    );
    const a3Done = rcv.arrivals.findIndex((a) => a.name === 'A-3' && a.status === 200);
    const b3 = rcv.arrivals.findIndex((a) => a.name === 'B-3');
    assert.ok(b3 < a3Done, "B is not held back by A's failing head");
    // One at a time per key: no delivery of a key was sent while another of it was unanswered.
    assert.equal(rcv.maxInFlight.get('A'), 1, 'A: one delivery in flight at a time');
    assert.equal(rcv.maxInFlight.get('B'), 1, 'B: one delivery in flight at a time');
  });

  it('keeps the order across kill -9 and a restart', async () => {
    const rcv = await orderReceiver({ 'A-2': 1 });
    const first = await spawnHookd();
    let second: Awaited<ReturnType<typeof spawnHookd>> | undefined;
    cleanups.push(async () => {
      if (second) await second.stop();
      else await first.kill();
      rmSync(first.dataDir, { recursive: true, force: true });
    });
    const hook = await api(first.url, first.token, 'POST', '/hooks', {
      ...HOOK(rcv.url),
      RetrySchedule: [0, 3],
    });
    assert.equal(hook.status, 201, hook.text);
    const names = ['A-1', 'A-2', 'A-3', 'A-4', 'A-5'];
    assert.equal((await api(first.url, first.token, 'POST', '/_hookd/report', fire(names))).status, 202);
    // A-2 failed once and waits 3 s for its retry: A-3… are held; the daemon dies now.
    await until('the failure of A-2', () => rcv.arrivals.some((a) => a.name === 'A-2'));
    await first.kill();
    second = await spawnHookd([], { dataDir: first.dataDir });
    await until('all of A after the restart', () => successes(rcv.arrivals, 'A').length === 5, 30_000);
    assert.deepEqual(successes(rcv.arrivals, 'A'), names);
    assert.deepEqual(ofKey(rcv.arrivals, 'A'), ['A-1', 'A-2', 'A-2', 'A-3', 'A-4', 'A-5']);
  });
});

describe('KeyQueues', () => {
  const item = (id: string, roundStart = 0): OrderedItem => ({
    id,
    hookId: 'hk',
    roundStart,
    cancelled: false,
    heldBy: undefined,
    heldBehind: undefined,
  });

  it('puts a redelivery behind what waits, but never before a started head', () => {
    const released: string[] = [];
    const q = new KeyQueues<OrderedItem>(
      () => 'k',
      (i) => released.push(i.id),
    );
    const a = item('msg_1');
    const b = item('msg_2');
    const old = item('msg_0', 1);
    q.add(a);
    q.add(b);
    q.add(old);
    assert.equal(q.admit(a), true);
    assert.equal(q.admit(old), false);
    assert.equal(old.heldBehind, 'msg_1');
    assert.equal(q.admit(b), false);
    q.add(item('msg_00'));
    q.remove(a);
    // msg_00 sorts first of the waiting first-round ones; the held ones are released when they lead.
    assert.deepEqual(released, []);
    assert.equal(q.heldKeys, 1);
  });

  it('a cancelled head releases nobody', () => {
    const released: string[] = [];
    const q = new KeyQueues<OrderedItem>(
      () => 'k',
      (i) => released.push(i.id),
    );
    const a = item('msg_1');
    const b = item('msg_2');
    q.add(a);
    q.add(b);
    q.admit(a);
    q.admit(b);
    a.cancelled = true;
    q.remove(a);
    assert.deepEqual(released, []);
    b.cancelled = false;
    const c = item('msg_3');
    q.add(c);
    q.remove(b);
    assert.deepEqual(released, []);
    assert.equal(q.admit(c), true);
  });
});
