import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { STORE_FILE } from '../../src/daemon/open-store.js';
import { type HookdProcess, spawnHookd, tempDir } from '../helpers/hookd.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { createHook, startReceiver, startUpstream } from '../helpers/servers.js';

// kill -9 in the middle of proxied requests that fire a BeforeCompletion and an AfterCompletion
// hook, on the SQLite file and on a PostgreSQL database: every request whose response the client
// received has both callbacks delivered after the restart, and a callback delivered twice (sent
// before the kill, sent again after it) carries the same webhook-id both times. npm test runs a short version; the full one (10 rounds of 10,000
// requests, docs/BENCHMARKS.md) is
//   HOOKD_CRASH_ROUNDS=10 HOOKD_CRASH_REQUESTS=10000 node scripts/run-tests.js delivery/proxy-crash
const ROUNDS = Number(process.env.HOOKD_CRASH_ROUNDS ?? 2);
const REQUESTS = Number(process.env.HOOKD_CRASH_REQUESTS ?? 1500);
const CONCURRENCY = 32;

interface RoundResult {
  completed: number;
  lostBefore: number;
  lostAfter: number;
  duplicates: number;
  duplicateIdMismatches: number;
  /** Deliveries the store holds after the restart. */
  stored: number;
}

/** Sends GET /crash/<n> for n = 0… with CONCURRENCY clients until the daemon dies or all are sent. */
async function drive(url: string, total: number, onDone: (n: number) => void): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const target = new URL(url);
  let next = 0;
  let dead = false;
  const one = (n: number) =>
    new Promise<void>((resolve) => {
      const req = request({ host: target.hostname, port: target.port, path: `/crash/${n}`, agent }, (res) => {
        res.resume();
        // The response counts as received only once it is complete, as the client sees it.
        res.on('end', () => {
          if (res.complete && res.statusCode === 200) onDone(n);
          resolve();
        });
        res.on('error', () => resolve());
      });
      req.on('error', () => {
        dead = true;
        resolve();
      });
      req.end();
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (!dead && next < total) await one(next++);
    }),
  );
  agent.destroy();
}

type Store = 'sqlite' | 'postgres';

/** Deliveries in the data dir's SQLite file; 0 when the daemon kept none there. */
function countFileDeliveries(dataDir: string): number {
  const file = join(dataDir, STORE_FILE);
  if (!existsSync(file)) return 0;
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM deliveries').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

async function round(i: number, store: Store): Promise<RoundResult> {
  const receiver = await startReceiver();
  const upstream = await startUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  const dataDir = tempDir('hookd-proxy-crash-');
  let db: TestDatabase | undefined;
  let daemon: HookdProcess | undefined;
  try {
    const args = ['--upstream', upstream.url];
    if (store === 'postgres') {
      db = await createTestDatabase();
      args.push('--database-url', db.url);
    }
    daemon = await spawnHookd(args, { dataDir });
    for (const [type, name] of [
      [0, 'before'],
      [1, 'after'],
    ] as const) {
      await createHook(daemon, {
        Type: type,
        PathPattern: '/crash/(*)',
        Methods: ['GET'],
        Callback: `${receiver.url}/${name}`,
        CallbackContent: '$1',
      });
    }
    const completed = new Set<number>();
    // Killed somewhere between 30 % and 70 % of the way, at a different point each round.
    const killAt = Math.floor(REQUESTS * (0.3 + 0.4 * ((i * 0.618) % 1)));
    const victim = daemon;
    let killed: Promise<void> | undefined;
    await drive(daemon.url, REQUESTS, (n) => {
      completed.add(n);
      if (completed.size === killAt) killed = victim.kill();
    });
    await (killed ?? victim.kill());

    // Restart on the same store: what was recorded is delivered.
    daemon = await spawnHookd(args, { dataDir });
    const seen = (name: string) => {
      const ids = new Map<number, Set<string>>();
      let count = 0;
      for (const c of receiver.calls) {
        if (c.url !== `/${name}`) continue;
        count++;
        const n = Number(c.body);
        const s = ids.get(n) ?? new Set<string>();
        ids.set(n, s);
        s.add(String(c.headers['webhook-id']));
      }
      return { ids, count };
    };
    const missing = () => {
      const b = seen('before').ids;
      const a = seen('after').ids;
      return [...completed].filter((n) => !b.has(n) || !a.has(n)).length;
    };
    const deadline = Date.now() + 60_000;
    while (missing() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const before = seen('before');
    const after = seen('after');
    let mismatches = 0;
    for (const s of [...before.ids.values(), ...after.ids.values()]) if (s.size > 1) mismatches++;
    // The deliveries are where the round put them: the database, or the file in the data dir.
    const stored =
      db === undefined
        ? countFileDeliveries(dataDir)
        : (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM deliveries')).rows[0]!.n;
    return {
      stored,
      completed: completed.size,
      lostBefore: [...completed].filter((n) => !before.ids.has(n)).length,
      lostAfter: [...completed].filter((n) => !after.ids.has(n)).length,
      duplicates: before.count - before.ids.size + (after.count - after.ids.size),
      duplicateIdMismatches: mismatches,
    };
  } finally {
    await daemon?.stop().catch(() => undefined);
    await db?.drop();
    await upstream.close();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const pgSkip = await pgSkipReason();

for (const store of ['sqlite', 'postgres'] as const) {
  describe(`kill -9 during proxied requests (BeforeCompletion and AfterCompletion hooks, ${store})`, {
    skip: store === 'postgres' ? pgSkip : undefined,
  }, () => {
    it(`loses no trigger whose response the client received (${ROUNDS} rounds of up to ${REQUESTS} requests)`, {
      timeout: 120_000 + ROUNDS * 90_000,
    }, async () => {
      const results: RoundResult[] = [];
      for (let i = 0; i < ROUNDS; i++) results.push(await round(i, store));
      if (process.env.HOOKD_CRASH_REPORT) console.log(JSON.stringify({ store, results }));
      for (const [i, r] of results.entries()) {
        assert.ok(r.completed > 0, `round ${i}: some responses were received before the kill`);
        assert.ok(r.stored >= 2 * r.completed, `round ${i}: the ${store} store holds the deliveries`);
        assert.equal(r.lostBefore, 0, `round ${i}: BeforeCompletion callbacks lost: ${JSON.stringify(r)}`);
        assert.equal(r.lostAfter, 0, `round ${i}: AfterCompletion callbacks lost: ${JSON.stringify(r)}`);
        assert.equal(r.duplicateIdMismatches, 0, `round ${i}: a duplicate carried another webhook-id`);
      }
    });
  });
}
