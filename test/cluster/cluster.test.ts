/**
 * Three real hookd processes on one PostgreSQL database, with a real upstream and real
 * receivers: hook changes reach every instance, a burst spread over them is delivered exactly
 * once, kill -9 of one instance in the middle of a burst loses nothing, the live tail of one
 * instance shows the callbacks of all, and `Persist: false` hooks live as long as the cluster.
 * Skipped, saying so, when PostgreSQL is not reachable (HOOKD_TEST_DATABASE_URL).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { Agent, request } from 'undici';
import type { Hook } from '../../src/hook/hook.js';
import { MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { api, HOOKCTL_BIN, tempDir } from '../helpers/hookd.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import {
  firedCalls,
  fireMark,
  type Receiver,
  sleep,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';
import { counter, until } from '../helpers/until.js';
import { assertBuilt, type Instance, pool, startInstance } from './cluster-helpers.js';

const skip = await pgSkipReason();
const LEASE_MS = 2000;

describe('cluster: three hookd instances on one PostgreSQL database', { skip, timeout: 120_000 }, () => {
  let tdb: TestDatabase;
  let dataDir: string;
  let upstream: Upstream;
  let receiver: Receiver;
  let token: string;
  const all: Instance[] = [];
  let [a, b, c] = [] as Instance[];
  const agent = new Agent({ connections: 32, pipelining: 1 });

  const start = async (name: string) => {
    const inst = await startInstance(name, {
      databaseUrl: tdb.url,
      dataDir,
      upstream: upstream.url,
      leaseMs: LEASE_MS,
    });
    all.push(inst);
    return inst;
  };
  const instanceId = async (inst: Instance): Promise<string> => {
    const { rows } = await tdb.query<{ id: string }>('SELECT id FROM hookd_instances WHERE pid = $1', [
      inst.pid,
    ]);
    assert.equal(rows.length, 1, `${inst.name} has one row in hookd_instances`);
    return rows[0]!.id;
  };
  const create = async (on: Instance, body: Record<string, unknown>): Promise<Hook> => {
    const r = await api<Hook>(on.url, token, 'POST', '/hooks', body);
    assert.equal(r.status, 201, r.text);
    return r.body;
  };
  /** Whether the instance's match index (not its database) has the hook: the dry run reads the index. */
  const indexed = async (on: Instance, path: string, hookId: string): Promise<boolean> => {
    const r = await api<{ HookId: string }[]>(on.url, token, 'POST', '/_hookd/match', {
      Method: 'GET',
      Path: path,
      StatusCode: 200,
    });
    assert.equal(r.status, 200, r.text);
    return r.body.some((m) => m.HookId === hookId);
  };
  const proxied = async (on: Instance, path: string): Promise<number> => {
    const res = await request(`${on.url}${path}`, { dispatcher: agent });
    await res.body.dump();
    return res.statusCode;
  };

  before(async () => {
    assertBuilt();
    tdb = await createTestDatabase();
    dataDir = tempDir('hookd-cluster-');
    upstream = await startUpstream();
    receiver = await startReceiver();
    // Started together: migrations and the admin bootstrap must not race.
    [a, b, c] = await Promise.all([start('A'), start('B'), start('C')]);
    token = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
  });

  after(async () => {
    for (const inst of all) await inst.kill();
    await agent.close();
    await receiver?.close();
    await upstream?.close();
    await tdb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('instances starting together migrate once and create exactly one admin with one token', async () => {
    const users = await tdb.query<{ name: string }>('SELECT name FROM users');
    assert.deepEqual(
      users.rows.map((r) => r.name),
      ['admin'],
    );
    const tokens = await tdb.query('SELECT id FROM tokens');
    assert.equal(tokens.rows.length, 1);
    // Each version once, whoever applied it.
    const versions = await tdb.query<{ version: number }>(
      'SELECT version FROM schema_migrations ORDER BY version',
    );
    assert.deepEqual(
      versions.rows.map((r) => r.version),
      MIGRATIONS.map((m) => m.version),
    );
    const instances = await tdb.query('SELECT id FROM hookd_instances');
    assert.equal(instances.rows.length, 3);
    for (const inst of [a!, b!, c!]) {
      const r = await api(inst.url, token, 'GET', '/hooks');
      assert.equal(
        r.status,
        200,
        `${inst.name} accepts the token written by whichever instance created admin`,
      );
    }
  });

  it('a hook created through one instance fires for traffic through the others', async () => {
    const hook = await create(a!, {
      PathPattern: '/one/(*)',
      Callback: `${receiver.url}/one`,
      Methods: ['GET'],
      CallbackContent: '{"path":"$REQUEST_PATH"}',
    });
    // The instances learn of changes only by NOTIFY (they never poll the table): the hook
    // reaching their index at all is the notification arriving.
    for (const inst of [b!, c!])
      await until(`${inst.name} indexes the new hook`, () => indexed(inst, '/one/x', hook.Id), 30_000);
    receiver.reset();
    assert.equal(await proxied(b!, '/one/through-b'), 200);
    assert.equal(await proxied(c!, '/one/through-c'), 200);
    const calls = await receiver.waitFor(2);
    assert.deepEqual(
      new Set(calls.map((x) => JSON.parse(x.body).path)),
      new Set(['/one/through-b', '/one/through-c']),
    );
  });

  it('3,000 triggers spread over the instances give exactly 3,000 deliveries, none sent twice', async () => {
    const hook = await create(b!, {
      PathPattern: '/burst/(*)',
      Callback: `${receiver.url}/burst`,
      Methods: ['GET'],
      CallbackContent: '{"n":"$1"}',
    });
    for (const inst of [a!, c!]) await until('hook indexed', () => indexed(inst, '/burst/0', hook.Id), 5000);
    receiver.reset();
    const N = 3000;
    const instances = [a!, b!, c!];
    const ops = instances.map((i) => i.opsUrl);
    const mark = await fireMark(ops, receiver);
    const started = performance.now();
    const statuses = await pool(N, 48, (i) => proxied(instances[i % 3]!, `/burst/${i}`));
    assert.ok(
      statuses.every((s) => s === 200),
      'every proxied request answered 200',
    );
    await receiver.waitFor(N, 60_000);
    const seconds = (performance.now() - started) / 1000;
    const calls = (await firedCalls(ops, receiver, mark, 60_000)).filter((x) => x.url === '/burst');
    const ids = new Set(calls.map((x) => x.headers['webhook-id']));
    const ns = new Set(calls.map((x) => JSON.parse(x.body).n as string));
    assert.equal(calls.length, N, 'exactly N callbacks reached the receiver');
    assert.equal(ids.size, N, 'no delivery was sent twice');
    assert.equal(ns.size, N, 'one callback per trigger');
    // An outcome is written after the receiver's answer, in the instance's next group commit: the
    // log catches up with the receiver, then says one attempt each.
    const tally = async () =>
      (
        await tdb.query<{ n: number; ok: number; attempts: number }>(
          "SELECT count(*)::int AS n, count(*) FILTER (WHERE status = 'succeeded')::int AS ok, sum(attempts)::int AS attempts " +
            'FROM deliveries WHERE hook_id = $1',
          [hook.Id],
        )
      ).rows[0]!;
    await until('every outcome recorded', async () => (await tally()).ok === N, 30_000);
    assert.deepEqual(await tally(), { n: N, ok: N, attempts: N });
    console.log(
      `# ${N} triggers over 3 instances delivered in ${seconds.toFixed(1)} s (${(N / seconds).toFixed(0)}/s)`,
    );
  });

  it('a hook deleted on one instance stops firing on all within a second', async () => {
    const hook = await create(c!, {
      PathPattern: '/gone/(*)',
      Callback: `${receiver.url}/gone`,
      Methods: ['GET'],
    });
    for (const inst of [a!, b!]) await until('hook indexed', () => indexed(inst, '/gone/x', hook.Id), 5000);
    const del = await api(b!.url, token, 'DELETE', `/hooks/${hook.Id}`);
    assert.equal(del.status, 204);
    // By NOTIFY, the only way a deletion reaches another instance's index.
    for (const inst of [a!, c!]) {
      await until(
        `${inst.name} drops the hook`,
        async () => !(await indexed(inst, '/gone/x', hook.Id)),
        30_000,
      );
    }
    receiver.reset();
    const ops = [a!, b!, c!].map((i) => i.opsUrl);
    const mark = await fireMark(ops, receiver);
    for (const inst of [a!, b!, c!]) assert.equal(await proxied(inst, '/gone/x'), 200);
    const calls = await firedCalls(ops, receiver, mark);
    assert.deepEqual(
      calls.filter((x) => x.url === '/gone'),
      [],
      'no instance fires the deleted hook',
    );
  });

  it('hookctl tail on one instance sees the callbacks fired by every instance', async () => {
    const hook = await create(a!, {
      PathPattern: '/tail/(*)',
      Callback: `${receiver.url}/tail`,
      Methods: ['GET'],
    });
    for (const inst of [b!, c!]) await until('hook indexed', () => indexed(inst, '/tail/x', hook.Id), 5000);
    // The instances learn on a control channel that C has a tail client; listen there too.
    const control = new pg.Client({ connectionString: tdb.url });
    await control.connect();
    const announced = new Promise<void>((resolve) => {
      control.on('notification', (n) => {
        if (n.payload?.includes('"demand"') && n.payload.includes('"admin"')) resolve();
      });
    });
    await control.query('LISTEN hookd_control');
    const events: Record<string, unknown>[] = [];
    let tail: ChildProcess | undefined;
    try {
      tail = spawn(process.execPath, [HOOKCTL_BIN, '--debug', 'tail', '--hook', hook.Id, '-o', 'json'], {
        env: {
          ...process.env,
          HOOKD_URL: c!.url,
          HOOKD_TOKEN: token,
          XDG_CONFIG_HOME: dataDir,
          NO_COLOR: '1',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      createInterface({ input: tail.stdout! }).on('line', (line) => events.push(JSON.parse(line)));
      await Promise.race([
        announced,
        sleep(10_000).then(() => {
          throw new Error('C never announced its tail client');
        }),
      ]);
      // The announcement reaches A and B as it reached this test, but when they read it nothing
      // tells: each path is fired again until the tail has shown it (a fire before its instance
      // knew of the tail client is, rightly, not shown).
      const shown = (path: string) =>
        events.some((e) => e.kind === 'fired' && (e.Trigger as { Path: string }).Path === path);
      for (const [inst, path] of [
        [a!, '/tail/from-a'],
        [b!, '/tail/from-b'],
        [c!, '/tail/from-c'],
      ] as const) {
        await until(
          `the tail shows ${path}`,
          async () => {
            if (shown(path)) return true;
            const r = await api(inst.url, token, 'POST', '/_hookd/report', {
              Method: 'GET',
              Path: path,
              StatusCode: 200,
            });
            assert.equal(r.status, 202, r.text);
            return false;
          },
          { ms: 30_000, every: 250 },
        );
      }
      await until(
        'tail shows an attempt for every fired event',
        () =>
          events.filter((e) => e.kind === 'attempt').length >=
          events.filter((e) => e.kind === 'fired').length,
        10_000,
      );
      const fired = events.filter((e) => e.kind === 'fired').map((e) => (e.Trigger as { Path: string }).Path);
      const attempts = events.filter((e) => e.kind === 'attempt');
      assert.deepEqual(new Set(fired), new Set(['/tail/from-a', '/tail/from-b', '/tail/from-c']));
      assert.ok(attempts.length >= 3);
      assert.ok(attempts.every((e) => e.Outcome === 'succeeded' && e.HookId === hook.Id));
      assert.ok(
        events.every((e) => !('owner' in e)),
        'the owner field stays inside hookd',
      );
    } finally {
      tail?.kill('SIGINT');
      await control.end();
    }
  });

  it('kill -9 of one instance in the middle of a burst loses nothing', async () => {
    const slow = await startReceiver();
    try {
      const hook = await create(a!, {
        PathPattern: '/kill/(*)',
        Callback: `${slow.url}/kill`,
        Methods: ['GET'],
        CallbackContent: '{"n":"$1"}',
      });
      for (const inst of [b!, c!]) await until('hook indexed', () => indexed(inst, '/kill/0', hook.Id), 5000);
      const victim = a!;
      const victimId = await instanceId(victim);
      // Nothing is answered until the kill: deliveries pile up in flight and pending everywhere.
      slow.hold();
      const N = 900;
      let killedAt = 0;
      let diedAt = 0;
      let heldByVictim = 0;
      const acknowledged = new Set<number>();
      const killer = (async () => {
        await until('half of the burst acknowledged', () => acknowledged.size >= N / 2, {
          ms: 30_000,
          every: 5,
        });
        killedAt = performance.now();
        await victim.kill();
        diedAt = performance.now();
        const { rows } = await tdb.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM deliveries WHERE lease_owner = $1 AND status = 'pending'",
          [victimId],
        );
        heldByVictim = rows[0]!.n;
        slow.release();
      })();
      await pool(N, 24, async (i) => {
        // A load balancer sends to the survivors once one is gone.
        const to = killedAt === 0 ? [a!, b!, c!][i % 3]! : [b!, c!][i % 2]!;
        try {
          const r = await request(`${to.url}/_hookd/report`, {
            method: 'POST',
            dispatcher: agent,
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ Method: 'GET', Path: `/kill/${i}`, StatusCode: 200 }),
          });
          await r.body.dump();
          // 202 is said once the callback is recorded: from then on it must arrive.
          if (r.statusCode === 202) acknowledged.add(i);
        } catch {
          // In flight to the killed instance: not acknowledged, so nothing was promised.
        }
      });
      await killer;
      assert.ok(heldByVictim > 0, 'the killed instance held undelivered deliveries when it died');

      // Its lease runs out after LEASE_MS; the survivors take its deliveries over.
      await until(
        'every recorded delivery succeeded',
        async () => {
          const { rows } = await tdb.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM deliveries WHERE hook_id = $1 AND status <> 'succeeded'",
            [hook.Id],
          );
          return rows[0]!.n === 0;
        },
        { ms: 30_000, every: 100 },
      );
      const recorded = await tdb.query<{ id: string; path: string; attempts: number }>(
        'SELECT id, t_path AS path, attempts FROM deliveries WHERE hook_id = $1',
        [hook.Id],
      );
      const paths = recorded.rows.map((r) => r.path);
      assert.equal(new Set(paths).size, paths.length, 'one delivery per trigger');
      for (const i of acknowledged)
        assert.ok(paths.includes(`/kill/${i}`), `acknowledged trigger ${i} was recorded`);
      const calls = await slow.waitFor(recorded.rows.length, 10_000);
      // Nothing more can be sent: every delivery is recorded as succeeded (so none is reclaimed),
      // the victim is gone, and the survivors hold none in memory (an attempt leaves that count
      // only once answered, so a send of theirs has reached the receiver by then).
      await until('the survivors hold no delivery', async () => {
        const held = await Promise.all([b!, c!].map((x) => counter(x.opsUrl, 'hookd_outbox_depth')));
        return held[0] === 0 && held[1] === 0;
      });
      const byId = new Map<string, number[]>();
      for (const x of slow.calls) {
        const id = x.headers['webhook-id'] as string;
        byId.set(id, [...(byId.get(id) ?? []), x.arrivedAt]);
      }
      for (const r of recorded.rows) assert.ok(byId.has(r.id), `delivery ${r.path} reached the receiver`);
      assert.equal(byId.size, recorded.rows.length, 'nothing but recorded deliveries was sent');
      // A callback the victim had sent but not seen answered goes again (at least once): only those.
      const twice = [...byId.entries()].filter(([, times]) => times.length > 1);
      for (const [id, times] of twice) {
        assert.equal(times.length, 2, `${id} sent at most twice`);
        // (The receiver runs on this event loop: allow it a moment to read what arrived before the exit.)
        assert.ok(times[0]! < diedAt + 500, `${id}: its first send was in flight when the instance died`);
      }
      console.log(
        `# kill -9: ${acknowledged.size}/${N} acknowledged, ${recorded.rows.length} recorded, ` +
          `${heldByVictim} held by the killed instance, ${twice.length} resent after the kill, ${calls.length} calls`,
      );
      all.splice(all.indexOf(victim), 1);
      a = undefined;
    } finally {
      slow.release();
      await slow.close();
    }
  });

  it('Persist: false hooks live as long as the cluster: they survive one instance restarting, not all', async () => {
    const hook = await create(b!, {
      PathPattern: '/eph/(*)',
      Callback: `${receiver.url}/eph`,
      Methods: ['GET'],
      Persist: false,
    });
    const durable = await create(b!, {
      PathPattern: '/dur/(*)',
      Callback: `${receiver.url}/dur`,
      Methods: ['GET'],
    });
    await until('hook indexed on C', () => indexed(c!, '/eph/x', hook.Id), 5000);
    receiver.reset();
    assert.equal(await proxied(c!, '/eph/via-c'), 200);
    await receiver.waitFor(1);

    // One instance restarts while the others run: the service did not restart.
    const again = await start('A2');
    assert.ok(
      await indexed(again, '/eph/x', hook.Id),
      'a restarted instance still has the Persist: false hook',
    );
    assert.equal((await api(again.url, token, 'GET', `/hooks/${hook.Id}`)).status, 200);

    // Every instance stops: that is a restart of the service.
    for (const inst of [again, b!, c!]) assert.equal(await inst.stop(), 0, `${inst.name} stops cleanly`);
    all.length = 0;
    const first = await start('B2');
    assert.equal(
      (await api(first.url, token, 'GET', `/hooks/${hook.Id}`)).status,
      404,
      'the Persist: false hook is gone',
    );
    assert.equal(
      (await api(first.url, token, 'GET', `/hooks/${durable.Id}`)).status,
      200,
      'the Persist: true hook is kept',
    );
    assert.equal(await indexed(first, '/eph/x', hook.Id), false);
    const { rows } = await tdb.query<{ n: number }>('SELECT count(*)::int AS n FROM eph_hooks');
    assert.equal(rows[0]!.n, 0);
  });
});
