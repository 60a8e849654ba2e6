import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { describe, it } from 'node:test';
import { type HookdProcess, spawnHookd, tempDir } from '../helpers/hookd.js';
import { createHook, startReceiver, startUpstream } from '../helpers/servers.js';

// kill -9 in the middle of proxied requests that fire a BeforeCompletion and an AfterCompletion
// hook: every request whose response the client received has both callbacks delivered after the
// restart, and a callback delivered twice (sent before the kill, sent again after it) carries the
// same webhook-id both times. npm test runs a short version; the full one (10 rounds of 10,000
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

async function round(i: number): Promise<RoundResult> {
  const receiver = await startReceiver();
  const upstream = await startUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  const dataDir = tempDir('hookd-proxy-crash-');
  let daemon: HookdProcess | undefined;
  try {
    daemon = await spawnHookd(['--upstream', upstream.url], { dataDir });
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

    // Restart on the same data dir: what was recorded is delivered.
    daemon = await spawnHookd(['--upstream', upstream.url], { dataDir });
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
    return {
      completed: completed.size,
      lostBefore: [...completed].filter((n) => !before.ids.has(n)).length,
      lostAfter: [...completed].filter((n) => !after.ids.has(n)).length,
      duplicates: before.count - before.ids.size + (after.count - after.ids.size),
      duplicateIdMismatches: mismatches,
    };
  } finally {
    await daemon?.stop().catch(() => undefined);
    await upstream.close();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('kill -9 during proxied requests (BeforeCompletion and AfterCompletion hooks)', () => {
  it(`loses no trigger whose response the client received (${ROUNDS} rounds of up to ${REQUESTS} requests)`, {
    timeout: 120_000 + ROUNDS * 90_000,
  }, async () => {
    const results: RoundResult[] = [];
    for (let i = 0; i < ROUNDS; i++) results.push(await round(i));
    if (process.env.HOOKD_CRASH_REPORT) console.log(JSON.stringify(results));
    for (const [i, r] of results.entries()) {
      assert.ok(r.completed > 0, `round ${i}: some responses were received before the kill`);
      assert.equal(r.lostBefore, 0, `round ${i}: BeforeCompletion callbacks lost: ${JSON.stringify(r)}`);
      assert.equal(r.lostAfter, 0, `round ${i}: AfterCompletion callbacks lost: ${JSON.stringify(r)}`);
      assert.equal(r.duplicateIdMismatches, 0, `round ${i}: a duplicate carried another webhook-id`);
    }
  });
});
