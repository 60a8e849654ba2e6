import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { type FanoutEvent, TailFanout } from '../../src/cluster/tail-fanout.js';
import { PgDatabase } from '../../src/store/postgres/pg-database.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { until } from '../helpers/until.js';

const skip = await pgSkipReason();
const log = pino({ level: 'silent' });

const event = (owner: string, n: number, over: Record<string, unknown> = {}): FanoutEvent => ({
  owner,
  kind: 'fired',
  Time: '2026-11-22T12:00:00.000+00:00',
  HookId: 'hk_x',
  DeliveryId: `msg_${n}`,
  Trigger: { Method: 'GET', Path: `/p/${n}`, StatusCode: 200 },
  ...over,
});

describe('TailFanout', { skip }, () => {
  let tdb: TestDatabase;
  let dbs: PgDatabase[] = [];
  let a: TailFanout;
  let b: TailFanout;
  const atA: FanoutEvent[] = [];
  const atB: FanoutEvent[] = [];
  const demandAtA: boolean[] = [];
  before(async () => {
    tdb = await createTestDatabase();
    dbs = [await PgDatabase.open(tdb.url, { log }), await PgDatabase.open(tdb.url, { log })];
    a = new TailFanout({ db: dbs[0]!, log, announceMs: 500 });
    b = new TailFanout({ db: dbs[1]!, log, announceMs: 500 });
    a.onRemote((e) => atA.push(e));
    b.onRemote((e) => atB.push(e));
    a.onDemand((w) => demandAtA.push(w));
    await a.start();
    await b.start();
  });
  /**
   * Publishes a marker from A to an owner B tails for the moment, and waits for it at B: A sends
   * its events in the order published, so anything A published before it has reached B by then.
   */
  const markerThroughA = async (n: number): Promise<FanoutEvent> => {
    b.watching('marker', 1);
    await until('A learns that B tails marker', () => a.wants('marker'));
    const marker = event('marker', n);
    a.publish(marker);
    await until('B received the marker', () => atB.some((e) => e.DeliveryId === marker.DeliveryId));
    b.watching('marker', -1);
    await until('A learns that nobody tails marker', () => !a.wants('marker'));
    return marker;
  };
  after(async () => {
    await a?.stop();
    await b?.stop();
    for (const db of dbs) await db.close();
    await tdb?.drop();
  });

  it('publishes nothing while nobody elsewhere tails', async () => {
    assert.equal(a.wants('alice'), false);
    a.publish(event('alice', 0));
    const marker = await markerThroughA(-1);
    assert.deepEqual(atB, [marker]);
    // The marker's tail client came and went: the next test counts demand changes from none.
    await until('A has no demand left', () => demandAtA.at(-1) === false);
    atB.length = 0;
    demandAtA.length = 0;
  });

  it("carries an owner's events to the instance whose tail clients watch that owner, in order, never back to the sender", async () => {
    b.watching('alice', 1);
    await until('A learns that B tails alice', () => a.wants('alice'));
    assert.equal(a.wants('bob'), false);
    assert.deepEqual(demandAtA, [true]);
    for (let i = 1; i <= 300; i++) a.publish(event('alice', i));
    a.publish(event('bob', 999));
    // The last of alice's, published after bob's: once it is there, bob's would have been too.
    a.publish(event('alice', 301));
    await until('B received them', () => atB.length >= 301);
    assert.deepEqual(
      atB.map((e) => e.DeliveryId),
      Array.from({ length: 301 }, (_, i) => `msg_${i + 1}`),
    );
    assert.deepEqual(atA, [], 'an instance does not receive its own events');
  });

  it('cuts the long strings of an event that would not fit a notification', async () => {
    atB.length = 0;
    const long = `/p/${'x'.repeat(10_000)}`;
    a.publish(
      event('alice', 1, { Trigger: { Method: 'GET', Path: long, StatusCode: 200 }, Error: 'e'.repeat(9000) }),
    );
    await until('B received it', () => atB.length === 1);
    const got = atB[0]!;
    assert.equal(got.Truncated, true);
    assert.ok((got.Trigger as { Path: string }).Path.length < 600);
    assert.ok((got.Error as string).length < 600);
  });

  it('stops publishing once the last tail client elsewhere has gone', async () => {
    atB.length = 0;
    b.watching('alice', 1);
    b.watching('alice', -1);
    assert.ok(a.wants('alice'), 'one client is still there');
    b.watching('alice', -1);
    await until('A learns that nobody tails alice', () => !a.wants('alice'));
    assert.deepEqual(demandAtA, [true, false]);
    a.publish(event('alice', 1));
    const marker = await markerThroughA(-2);
    assert.deepEqual(atB, [marker]);
  });
});
