import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { Agent, request, type ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { type HookdProcess, spawnHookd, tempDir } from '../helpers/hookd.js';
import { createTestDatabase, pgSkipReason } from '../helpers/pg-test-db.js';
import { requireOrSkip } from '../helpers/require.js';
import {
  createHook,
  type Receiver,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { childrenOf, getFresh, ownerOfPort } from './worker-procs.js';

// `--workers 2` with real processes (docs/DECISIONS.md "Using every core: workers"): a hook made
// through the API fires on every worker at once; the tail sees every worker's callbacks; kill -9
// of a worker during proxied AfterCompletion requests loses none whose response the client got.
const REQUESTS = Number(process.env.HOOKD_WORKERS_CRASH_REQUESTS ?? 5000);

async function start(
  upstream: Upstream,
  extra: string[] = [],
): Promise<{ daemon: HookdProcess; dataDir: string }> {
  const dataDir = tempDir('hookd-workers-');
  const daemon = await spawnHookd(['--upstream', upstream.url, '--workers', '2', ...extra], {
    dataDir,
    timeoutMs: 120_000,
  });
  return { daemon, dataDir };
}

describe('--workers 2', () => {
  let receiver: Receiver;
  let upstream: Upstream;
  /** The port each proxied path came from, as the upstream saw it. */
  const fromPort = new Map<string, number>();
  /** While set, the upstream holds the answers to the requests it accepts (requests in flight). */
  let hold: ServerResponse[] | undefined;
  before(async () => {
    receiver = await startReceiver();
    upstream = await startUpstream((req, res) => {
      fromPort.set(req.url ?? '', req.socket.remotePort ?? 0);
      if (hold) hold.push(res);
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  after(async () => {
    await receiver.close();
    await upstream.close();
  });

  /** The hook, made through a worker, fires at once on both; the tail, through a worker, sees all. */
  const everyWorker = async (extra: string[] = []) => {
    const { daemon, dataDir } = await start(upstream, extra);
    try {
      const workers = childrenOf(daemon.proc.pid!);
      assert.equal(workers.length, 2, 'two worker processes');
      // The tail, through a worker, to the primary.
      const ws = new WebSocket(`${daemon.url.replace(/^http/, 'ws')}/_hookd/tail`, {
        headers: { authorization: `Bearer ${daemon.token}` },
      });
      const tail: { kind: string; Trigger?: { Path?: string } }[] = [];
      ws.on('message', (d) => tail.push(JSON.parse(d.toString()) as (typeof tail)[number]));
      await new Promise((resolve, reject) => {
        ws.on('open', resolve);
        ws.on('error', reject);
      });
      await createHook(daemon, {
        Type: 1,
        PathPattern: '/fire/(*)',
        Methods: ['GET'],
        Callback: `${receiver.url}/after`,
        CallbackContent: '$1',
      });
      // At once: the 201 came only after every worker had the hook.
      // Pairs of fresh connections until both workers have proxied some (the kernel spreads
      // connections over the workers' sockets by a hash, so one may take several in a row).
      const owners = new Set<number | undefined>();
      let n = 0;
      while (n < 24 || (owners.size < 2 && n < 400)) {
        const pair = [n, n + 1];
        n += 2;
        for (const s of await Promise.all(pair.map((i) => getFresh(daemon.url, `/fire/${i}`))))
          assert.equal(s, 200);
        for (const i of pair) owners.add(ownerOfPort(workers, fromPort.get(`/fire/${i}`)!));
      }
      assert.deepEqual([...owners].sort(), [...workers].sort(), 'both workers proxied and fired');
      const calls = await receiver.waitFor(n, 30_000);
      assert.deepEqual(
        calls.map((c) => Number(c.body)).sort((a, b) => a - b),
        [...Array(n).keys()],
      );
      await until(
        'the tail to show every firing',
        () => tail.filter((e) => e.kind === 'fired').length >= n,
        60_000,
      );
      const paths = new Set(tail.filter((e) => e.kind === 'fired').map((e) => e.Trigger?.Path));
      for (let i = 0; i < n; i++) assert.ok(paths.has(`/fire/${i}`), `the tail saw /fire/${i}`);
      ws.close();
    } finally {
      receiver.reset();
      await daemon.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  };

  it('fires a hook created through the API on every worker, and the tail sees them all (SQLite)', () =>
    everyWorker());

  it('does the same on PostgreSQL', async (t) => {
    const skip = await pgSkipReason();
    if (skip) return requireOrSkip(t, skip, 'postgres');
    const db = await createTestDatabase();
    try {
      await everyWorker(['--database-url', db.url]);
    } finally {
      await db.drop();
    }
  });

  it(`loses no AfterCompletion callback when a worker is killed -9 during ${REQUESTS} requests`, async () => {
    const { daemon, dataDir } = await start(upstream);
    try {
      await createHook(daemon, {
        Type: 1,
        PathPattern: '/crash/(*)',
        Methods: ['GET'],
        Callback: `${receiver.url}/after`,
        CallbackContent: '$1',
      });
      const before = childrenOf(daemon.proc.pid!);
      assert.equal(before.length, 2);
      const victim = before[0]!;
      const completed = new Set<number>();
      let failed = 0;
      let afterKill = 0;
      let killed = false;
      const killAt = Math.floor(REQUESTS * 0.4);
      const agent = new Agent({ keepAlive: true, maxSockets: 32 });
      const target = new URL(daemon.url);
      let next = 0;
      const one = (i: number) =>
        new Promise<void>((resolve) => {
          const req = request(
            { host: target.hostname, port: target.port, path: `/crash/${i}`, agent },
            (res) => {
              res.resume();
              res.on('end', () => {
                // Received: complete, as the client sees it.
                if (res.complete && res.statusCode === 200) {
                  completed.add(i);
                  if (killed) afterKill++;
                } else failed++;
                resolve();
              });
              res.on('error', () => {
                failed++;
                resolve();
              });
            },
          );
          req.on('error', () => {
            failed++;
            resolve();
          });
          req.end();
        });
      await Promise.all([
        ...Array.from({ length: 32 }, async () => {
          while (next < REQUESTS) {
            const i = next++;
            if (i === killAt) hold = [];
            await one(i);
          }
        }),
        // The kill lands while both workers hold requests: the upstream keeps them waiting until
        // every client connection has one in flight, then the victim dies and the rest are answered.
        (async () => {
          await until(
            'every client connection waiting on the upstream',
            () => (hold?.length ?? 0) >= 32,
            60_000,
          );
          process.kill(victim, 'SIGKILL');
          killed = true;
          const held = hold!;
          hold = undefined;
          for (const res of held) if (!res.destroyed) res.writeHead(200).end('ok');
        })(),
      ]);
      agent.destroy();
      assert.ok(killed);
      // The killed worker had requests in flight: their clients saw the connection drop.
      assert.ok(failed > 0, 'requests were in flight on the killed worker');
      assert.ok(afterKill > 0, 'the other worker kept serving');
      // Every request whose response the client got has its callback.
      await until(
        `callbacks for all ${completed.size} completed requests`,
        () => {
          const got = new Set(receiver.calls.map((c) => Number(c.body)));
          for (const i of completed) if (!got.has(i)) return false;
          return true;
        },
        60_000,
      );
      // A replacement took the dead worker's place.
      await until(
        'a replacement worker',
        () => {
          const now = childrenOf(daemon.proc.pid!);
          return now.length === 2 && !now.includes(victim);
        },
        60_000,
      );
      assert.ok(completed.size + failed === REQUESTS);
    } finally {
      receiver.reset();
      await daemon.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
