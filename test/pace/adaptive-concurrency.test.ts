import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook, type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// A pace the receiver sets (src/pace/): hookd learns each receiver's concurrency limit from its
// answers. The slow receiver here answers at once up to its knee and 60 ms later for every
// request in flight above it, as a server with a fixed pool of workers does. The step is well
// above the pace's 5 ms slack and above twice a baseline that a machine busy with the rest of the
// suite lifts: lone answers delayed by a busy CPU raise the baseline (as they should for a
// receiver that got slower), and a step of 20 ms can then pass for an unloaded answer, letting the
// limit drift to twice the knee. So what the limit settles on is the knee, not the machine's noise.
const KNEE = 4;
const MAX = 16;

interface LoadedReceiver {
  url: string;
  received: number;
  /** The most requests it had in flight at once, over its last 100 requests. */
  recentPeak: number;
  close(): Promise<void>;
}

async function startKneeReceiver(status = () => 200): Promise<LoadedReceiver> {
  let inFlight = 0;
  const peaks: number[] = [];
  const r: LoadedReceiver = { url: '', received: 0, recentPeak: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    inFlight++;
    r.received++;
    peaks.push(inFlight);
    if (peaks.length > 100) peaks.shift();
    r.recentPeak = Math.max(...peaks);
    const delay = 60 * Math.max(0, inFlight - KNEE);
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        inFlight--;
        res.writeHead(status(), { 'content-type': 'text/plain' }).end('ok');
      }, delay),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  r.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return r;
}

/** The limit metric of one receiver (undefined when it has none). */
async function limitOf(d: TestDaemon, receiver: string): Promise<number | undefined> {
  const text = await (await fetch(`${d.opsUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`hookd_receiver_concurrency_limit{receiver="${receiver}"} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

/** Fires `n` callbacks of the hook on `prefix` through the report API, in batches. */
async function fire(d: TestDaemon, prefix: string, n: number): Promise<void> {
  for (let i = 0; i < n; i += 100) {
    const batch = Array.from({ length: Math.min(100, n - i) }, (_, k) => ({
      Method: 'GET',
      Path: `${prefix}/${i + k}`,
      StatusCode: 200,
      Phase: 'after',
    }));
    const res = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', batch);
    assert.equal(res.status, 202, res.text);
  }
}

const hookOn = (d: TestDaemon, prefix: string, callback: string) =>
  createHook(d, { PathPattern: `${prefix}/*`, Methods: ['GET'], Type: 1, Callback: callback });

describe('adaptive concurrency per receiver', () => {
  const closers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of closers.reverse()) await c();
  });

  it('settles near the knee of a receiver that slows with load, and a fast one beside it keeps going', async () => {
    const d = await startHookd({ deliveryPerEndpoint: MAX });
    closers.push(() => d.close());
    const slow = await startKneeReceiver();
    closers.push(() => slow.close());
    const fast: Receiver = await startReceiver();
    closers.push(() => fast.close());
    const slowHook = await hookOn(d, '/slow', `${slow.url}/in`);
    await hookOn(d, '/fast', `${fast.url}/in`);

    const SLOW = 600;
    const FAST = 100;
    await fire(d, '/slow', SLOW);
    await fire(d, '/fast', FAST);
    await fast.waitFor(FAST, 60_000);
    assert.ok(slow.received < SLOW, `the slow receiver is still backlogged (${slow.received} of ${SLOW})`);
    await until('every slow callback answered', () => slow.received >= SLOW, { ms: 120_000 });

    const limit = await limitOf(d, slow.url);
    assert.ok(limit !== undefined, 'the slow receiver has a limit metric');
    assert.ok(limit >= KNEE - 2 && limit <= KNEE + 4, `limit ${limit} settles near the knee ${KNEE}`);
    assert.ok(slow.recentPeak <= KNEE + 4, `at most ${slow.recentPeak} in flight at the end`);
    assert.ok((await limitOf(d, fast.url)) !== undefined, 'the fast receiver has a limit of its own');

    // The API says it too (hookctl deliveries prints it).
    const res = await fetch(`${d.url}/hooks/${slowHook.Id}/deliveries?limit=1`, {
      headers: { authorization: `Bearer ${d.token}` },
    });
    const header = res.headers.get('hookd-receiver-concurrency') ?? '';
    // Below the maximum it says why: the receiver's slow answers lowered it.
    const m =
      /^limit=(\d+); max=(\d+); receiver="([^"]+)"(?:; state=lowered; after\*=UTF-8''answers%20[^;]+)?$/.exec(
        header,
      );
    assert.ok(m, header);
    assert.ok(Number(m[1]) >= KNEE - 2 && Number(m[1]) <= KNEE + 4, header);
    assert.deepEqual([Number(m[2]), m[3]], [MAX, slow.url]);

    // And the console's hook page.
    const root = `${d.consoleUrl}/_hookd/console`;
    const signin = await fetch(`${root}/signin`);
    const pre = signin.headers.getSetCookie()[0]!.split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await signin.text())![1]!;
    const signed = await fetch(`${root}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, token: d.token }),
    });
    const cookie = signed.headers.getSetCookie()[0]!.split(';')[0]!;
    const page = await (await fetch(`${root}/hooks/${slowHook.Id}`, { headers: { cookie } })).text();
    const shown = /class="pace-limit">(\d+)<\/span> of (\d+)/.exec(page);
    assert.ok(shown, 'the hook page shows the receiver pace');
    assert.ok(
      Number(shown[1]) >= KNEE - 2 && Number(shown[1]) <= KNEE + 4 && shown[2] === String(MAX),
      shown[0],
    );
  });

  for (const status of [429, 503]) {
    it(`a receiver answering ${status} has its limit cut`, async () => {
      const d = await startHookd({ deliveryPerEndpoint: MAX });
      closers.push(() => d.close());
      const busy = await startReceiver();
      closers.push(() => busy.close());
      await hookOn(d, '/busy', `${busy.url}/in`);
      await fire(d, '/busy', 200);
      await busy.waitFor(200, 60_000);
      const before = await until('a limit', () => limitOf(d, busy.url));
      busy.reply = () => ({ status, headers: { 'retry-after': '1' } });
      await fire(d, '/busy', MAX);
      const after = await until(
        `a limit cut from ${before}`,
        () => limitOf(d, busy.url),
        (l) => l !== undefined && l <= Math.max(1, Math.floor(before / 2)),
      );
      assert.ok(after !== undefined && after >= 1);
    });
  }

  it('off: the limit stays at the maximum whatever the receiver does', async () => {
    const d = await startHookd({ deliveryPerEndpoint: MAX, adaptiveConcurrency: false });
    closers.push(() => d.close());
    const slow = await startKneeReceiver();
    closers.push(() => slow.close());
    await hookOn(d, '/slow', `${slow.url}/in`);
    await fire(d, '/slow', 200);
    await until('every callback answered', () => slow.received >= 200, { ms: 60_000 });
    assert.equal(await limitOf(d, slow.url), MAX);
    assert.ok(slow.recentPeak > KNEE + 4, `it piles on without adaptation (${slow.recentPeak})`);
  });
});
