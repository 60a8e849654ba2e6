import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { ClusterMember, newInstanceId } from '../../src/cluster/cluster-member.js';
import { PgDatabase } from '../../src/store/postgres/pg-database.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { until } from '../helpers/until.js';

const skip = await pgSkipReason();
const log = pino({ level: 'silent' });

describe('ClusterMember', { skip }, () => {
  let tdb: TestDatabase;
  const open: PgDatabase[] = [];
  before(async () => {
    tdb = await createTestDatabase();
  });
  after(async () => {
    for (const db of open) await db.close();
    await tdb?.drop();
  });

  const member = async (leaseMs = 1000, onLeaseLost?: (old: string) => void) => {
    const db = await PgDatabase.open(tdb.url, { log });
    open.push(db);
    const lease = { id: newInstanceId() };
    const m = new ClusterMember({ db, lease, leaseMs, log, ...(onLeaseLost && { onLeaseLost }) });
    return { db, lease, m };
  };
  const ephemeralHooks = async () =>
    (await tdb.query<{ n: number }>('SELECT count(*)::int AS n FROM eph_hooks')).rows[0]!.n;
  const putEphemeral = (id: string) =>
    tdb.query("INSERT INTO eph_hooks (id, owner, doc, modified) VALUES ($1, 'alice', '{}', 'm')", [id]);

  it('the first instance of a cluster clears the Persist: false hooks of the previous run; a joining one does not', async () => {
    const one = await member();
    await putEphemeral('hk_previous_run');
    assert.deepEqual(await one.m.join(), { first: true });
    assert.equal(await ephemeralHooks(), 0, 'cleared: the whole cluster had stopped');

    await putEphemeral('hk_this_run');
    const two = await member();
    assert.deepEqual(await two.m.join(), { first: false });
    assert.equal(await ephemeralHooks(), 1, 'kept: the cluster is running');
    assert.equal(await one.m.liveInstances(), 2);

    // Both stop (their connections close, and with them the "running" lock): the next is first.
    for (const x of [one, two]) {
      await x.m.leave();
      await x.db.close();
    }
    const three = await member();
    assert.deepEqual(await three.m.join(), { first: true });
    assert.equal(await ephemeralHooks(), 0);
    await three.m.leave();
    await three.db.close();
  });

  it('of instances starting together exactly one is first', async () => {
    const members = await Promise.all([1, 2, 3, 4].map(() => member()));
    const joined = await Promise.all(members.map((x) => x.m.join()));
    assert.equal(joined.filter((j) => j.first).length, 1);
    for (const x of members) {
      await x.m.leave();
      await x.db.close();
    }
  });

  it('an instance whose lease ran out is told, and carries on under a new, registered id', async () => {
    const lost: string[] = [];
    const x = await member(1000, (old) => lost.push(old));
    await x.m.join();
    const first = x.lease.id;
    // As if it had not renewed in time (a stalled process, a partitioned network).
    await tdb.query("UPDATE hookd_instances SET lease_until = now() - interval '1 second' WHERE id = $1", [
      first,
    ]);
    await until('lease loss noticed', () => lost.length === 1, 5000);
    assert.deepEqual(lost, [first]);
    await until('rejoined under a new id', () => x.lease.id !== first, 5000);
    const rows = await tdb.query<{ id: string; live: boolean }>(
      'SELECT id, lease_until > now() AS live FROM hookd_instances WHERE id = ANY($1)',
      [[first, x.lease.id]],
    );
    const byId = new Map(rows.rows.map((r) => [r.id, r.live]));
    assert.equal(byId.get(first), false, 'the old id stays, expired, so its deliveries can be claimed');
    assert.equal(byId.get(x.lease.id), true, 'the new id is registered and renewed');
    await x.m.leave();
  });
});
