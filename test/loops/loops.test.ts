import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Forwarder } from '../helpers/forwarder.js';
import { api, startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import {
  closedPort,
  createHook,
  send,
  sleep,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';
import { counter, until } from '../helpers/until.js';
import { type LoopRig, startLoopRig } from './loop-rig.js';

// Asked before any suite is declared: a top-level await between suites can let the runner
// finish the file before the suites after it are declared, so they would never run.
const skip = await pgSkipReason();

// A callback or notification that reaches hookd's proxy fires
// nothing, under any name; a chain back into hookd through another system is cut by CDN-Loop.
// The measure: upstream hits from one request, at most 5 in 3 s.

const WINDOW_MS = 3000;

/** Waits out the rest of the 3 s window since `start`, then gives the upstream's hits. */
async function hitsWithin(upstream: Upstream, start: number, prefix: string): Promise<string[]> {
  const left = WINDOW_MS - (Date.now() - start);
  if (left > 0) await sleep(left);
  return upstream.requests.filter((r) => r.url.startsWith(prefix)).map((r) => `${r.method} ${r.url}`);
}

describe('no loops: hook and notification callbacks into hookd fire nothing', () => {
  let rig: LoopRig | undefined;
  let upstream: Upstream;
  let d: TestDaemon;
  /** hookd under another address: the create-time check cannot know it. */
  let alias: Forwarder;

  before(async () => {
    rig = await startLoopRig();
    ({ upstream, d, alias } = rig);
  });
  after(async () => {
    await rig?.close();
  });

  it("finding 3: a hook whose callback is hookd's own proxy: one request, 2 upstream hits, the loop counted", async () => {
    await createHook(d, { PathPattern: '/loop/(*)', Methods: ['*'], Callback: `${alias.url}/loop/again` });
    const start = Date.now();
    const first = await send(`${d.url}/loop/start`);
    assert.equal(first.status, 200);
    await until(
      'loop cut',
      () => counter(d.opsUrl, 'hookd_loops_cut_total', 'kind="callback"'),
      (n) => n >= 1,
    );
    const hits = await hitsWithin(upstream, start, '/loop/');
    assert.ok(hits.length <= 5, `upstream hits in 3 s: ${hits.length}`);
    assert.deepEqual(hits, ['GET /loop/start', 'POST /loop/again']);
    // The callback itself was delivered (the upstream answered it): nothing else was held back.
    const again = upstream.requests.find((r) => r.url === '/loop/again')!;
    assert.match(String(again.headers['hookd-loop']), /^v1\.c\.\d+\./);
    assert.match(String(again.headers['cdn-loop']), /^hookd, hookd$/);
  });

  it('finding 4: a notification endpoint on a proxied path that a failing hook watches', async () => {
    const dead = await closedPort();
    await createHook(d, {
      PathPattern: '/nloop/(*)',
      Methods: ['*'],
      Callback: `http://127.0.0.1:${dead}/gone`,
      RetrySchedule: [0],
    });
    const n = await api(d.url, d.token, 'POST', '/_hookd/notifications', {
      Url: `${alias.url}/nloop/notify`,
      Events: ['delivery.failed'],
    });
    assert.equal(n.status, 201, n.text);
    const start = Date.now();
    await send(`${d.url}/nloop/start`);
    await until(
      'notification loop cut',
      () => counter(d.opsUrl, 'hookd_loops_cut_total', 'kind="notification"'),
      (x) => x >= 1,
    );
    const hits = await hitsWithin(upstream, start, '/nloop/');
    assert.ok(hits.length <= 5, `upstream hits in 3 s: ${hits.length}`);
    assert.deepEqual(hits, ['GET /nloop/start', 'POST /nloop/notify']);
  });

  it('a forged mark is no mark: the request fires its hooks', async () => {
    const receiver = await startReceiver();
    try {
      await createHook(d, { PathPattern: '/forged/(*)', Methods: ['GET'], Callback: `${receiver.url}/cb` });
      const t = Math.floor(Date.now() / 1000);
      await send(`${d.url}/forged/a`, { headers: { 'Hookd-Loop': `v1.c.${t}.${'A'.repeat(43)}` } });
      await receiver.waitFor(1);
    } finally {
      await receiver.close();
    }
  });

  it('a real mark copied from a callback is good for that request only: elsewhere the hooks fire', async () => {
    const receiver = await startReceiver();
    try {
      await createHook(d, { PathPattern: '/watched/(*)', Methods: ['*'], Callback: `${receiver.url}/got` });
      // The receiver sees hookd's mark on the callback it gets for /watched/1 ...
      await send(`${d.url}/watched/1`);
      const [cb] = await receiver.waitFor(1);
      const mark = String(cb!.headers['hookd-loop']);
      assert.match(mark, /^v1\.c\./);
      // ... and replays it on another request: not hookd's own, so it fires as any request does.
      await send(`${d.url}/watched/2`, { method: 'POST', headers: { 'Hookd-Loop': mark } });
      await receiver.waitFor(2);
    } finally {
      await receiver.close();
    }
  });

  it("Callback at hookd's own listen address: 400 naming Callback and the rule", async () => {
    const port = new URL(d.url).port;
    for (const cb of [`${d.url}/x`, `http://localhost:${port}/x`]) {
      const r = await api<{ code: string; errors: { field: string; message: string }[] }>(
        d.url,
        d.token,
        'POST',
        '/hooks',
        {
          PathPattern: '/self/(*)',
          Methods: ['GET'],
          Callback: cb,
        },
      );
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.errors[0]!.field, 'Callback');
      assert.match(r.body.errors[0]!.message, /hookd itself \(its listen address/);
    }
  });

  it('a request that went through hookd 4 times: 508, not forwarded; 3 times: forwarded with hookd added', async () => {
    upstream.reset();
    const r = await send(`${d.url}/hops/x`, {
      headers: { 'CDN-Loop': 'hookd, other, hookd, hookd;v=1, hookd' },
    });
    assert.equal(r.status, 508);
    assert.match(r.body, /LOOP_DETECTED/);
    assert.equal(upstream.requests.length, 0);
    assert.ok((await counter(d.opsUrl, 'hookd_loops_cut_total', 'kind="hops"')) >= 1);
    const ok = await send(`${d.url}/hops/y`, { headers: { 'CDN-Loop': 'hookd, hookd, hookd' } });
    assert.equal(ok.status, 200);
    assert.equal(upstream.requests[0]!.headers['cdn-loop'], 'hookd, hookd, hookd, hookd');
  });
});

describe('no loops: a chain back into hookd through another system is cut by CDN-Loop', () => {
  let upstream: Upstream;
  let d: TestDaemon;
  let relay: Server;
  const relayed: number[] = [];

  before(async () => {
    upstream = await startUpstream();
    d = await startHookd({ upstream: upstream.url });
    // Another system: takes hookd's callback and makes a request of its own to hookd, at another
    // path, keeping CDN-Loop as RFC 8586 asks (and the mark, which does not fit that request).
    relay = createServer((req: IncomingMessage, res) => {
      req.resume();
      req.on('end', () => {
        res.end('ok');
        const out = httpRequest(`${d.url}/chain/next`, {
          method: 'POST',
          agent: false,
          headers: {
            'cdn-loop': String(req.headers['cdn-loop']),
            'hookd-loop': String(req.headers['hookd-loop']),
          },
        });
        out.on('response', (r) => {
          relayed.push(r.statusCode ?? 0);
          r.resume();
        });
        out.on('error', () => undefined);
        out.end();
      });
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  });
  after(async () => {
    await d?.close();
    await upstream?.close();
    relay.closeAllConnections();
    await new Promise<void>((r) => relay.close(() => r()));
  });

  it('one request: the chain ends in a 508 after 3 relayed passes, at most 5 upstream hits in 3 s', async () => {
    await createHook(d, {
      PathPattern: '/chain/(*)',
      Methods: ['*'],
      Callback: `http://127.0.0.1:${(relay.address() as AddressInfo).port}/relay`,
    });
    const start = Date.now();
    await send(`${d.url}/chain/start`);
    await until(
      'chain cut',
      () => relayed,
      (l) => l.includes(508),
    );
    const hits = await hitsWithin(upstream, start, '/chain/');
    assert.ok(hits.length <= 5, `upstream hits in 3 s: ${hits.length}`);
    assert.deepEqual(hits, ['GET /chain/start', 'POST /chain/next', 'POST /chain/next', 'POST /chain/next']);
    assert.deepEqual(relayed, [200, 200, 200, 508]);
  });
});

describe('no loops: publicBaseUrl is hookd too', () => {
  it('a Callback under publicBaseUrl is refused with 400 naming Callback', async () => {
    const d = await startHookd({ publicBaseUrl: 'https://hooks.example.com' });
    try {
      const r = await api<{ errors: { field: string; message: string }[] }>(
        d.url,
        d.token,
        'POST',
        '/hooks',
        {
          PathPattern: '/p/(*)',
          Methods: ['GET'],
          Callback: 'https://hooks.example.com:443/p/again',
        },
      );
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.errors[0]!.field, 'Callback');
      assert.match(r.body.errors[0]!.message, /its publicBaseUrl https:\/\/hooks\.example\.com/);
    } finally {
      await d.close();
    }
  });
});

describe("no loops across a cluster: one instance's callback into another instance", {
  skip,
  timeout: 60_000,
}, () => {
  let tdb: TestDatabase;
  let dataDir: string;
  let upstream: Upstream;
  let a: TestDaemon;
  let b: TestDaemon;

  before(async () => {
    tdb = await createTestDatabase();
    dataDir = tempDir('hookd-loops-cluster-');
    upstream = await startUpstream();
    a = await startHookd({ upstream: upstream.url, databaseUrl: tdb.url }, { dataDir });
    b = await startHookd({ upstream: upstream.url, databaseUrl: tdb.url }, { dataDir });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await upstream?.close();
    await tdb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('A sends, B receives: B knows the mark (the key is in the shared store) and fires nothing', async () => {
    await createHook(a, { PathPattern: '/cl/(*)', Methods: ['*'], Callback: `${b.url}/cl/again` });
    // B has the hook too (the database announces it): without the mark it would fire there.
    await until(
      'B has the hook',
      async () => {
        const m = await api<unknown[]>(b.url, b.token, 'POST', '/_hookd/match', {
          Method: 'POST',
          Path: '/cl/x',
          StatusCode: 200,
        });
        return m.body.length;
      },
      (n) => n === 1,
    );
    const start = Date.now();
    await send(`${a.url}/cl/start`);
    await until(
      'B cut the loop',
      () => counter(b.opsUrl, 'hookd_loops_cut_total', 'kind="callback"'),
      (n) => n >= 1,
    );
    const hits = await hitsWithin(upstream, start, '/cl/');
    assert.ok(hits.length <= 5, `upstream hits in 3 s: ${hits.length}`);
    assert.deepEqual(hits, ['GET /cl/start', 'POST /cl/again']);
  });
});
