import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient } from 'redis';
import { Webhook } from 'standardwebhooks';
import { AddressPolicy } from '../../src/policy/index.js';
import type { SendOutcome, Transport } from '../../src/transports/index.js';
import { RESERVED_FIELD, redisTransport } from '../../src/transports/redis/index.js';
import { startTcpRelay } from '../helpers/tcp-relay.js';
import {
  brokerMissing,
  recordingContext,
  SECRET,
  signedAttempt,
  uniqueName,
} from '../helpers/transport-kit.js';
import { until } from '../helpers/until.js';

const SERVER = 'redis://127.0.0.1:6379';
const skip = await brokerMissing('Redis', 6379);

type Entry = [id: string, fields: string[]];

describe('redis transport against Redis Streams', { skip }, () => {
  const admin = createClient({ socket: { host: '127.0.0.1', port: 6379 } });
  const keys: string[] = [];
  const transports: Transport[] = [];

  before(async () => {
    await admin.connect();
  });

  after(async () => {
    await Promise.all(transports.map((t) => t.close()));
    if (keys.length) await admin.del(keys);
    admin.destroy();
  });

  function streamKey(): string {
    const k = uniqueName('hookd:test');
    keys.push(k);
    return k;
  }

  async function entries(key: string): Promise<Entry[]> {
    return (await admin.sendCommand(['XRANGE', key, '-', '+'])) as Entry[];
  }

  function transport(over: Parameters<typeof recordingContext>[0] = {}) {
    const rec = recordingContext(over);
    const t = redisTransport.create(rec.ctx);
    transports.push(t);
    return { t, ...rec };
  }

  it('adds an entry: the payload in body, each header a field; the id is the receipt; signatures verify', async () => {
    const key = streamKey();
    const { t } = transport();
    const body = JSON.stringify({ path: '/repositories/r1/timeseries/ts1' });
    const attempt = signedAttempt(`${SERVER}/0?stream=${key}`, body, ['x-tenant', 'acme']);
    const outcome = await t.send(attempt);
    assert.equal(outcome.kind, 'delivered', outcome.text);
    // What a consumer does: XREAD from the start.
    const read = (await admin.sendCommand(['XREAD', 'COUNT', '10', 'STREAMS', key, '0'])) as Record<
      string,
      Entry[]
    >;
    const [id, fields] = read[key]![0]!;
    assert.equal(outcome.text, `added to stream ${key} as ${id} on 127.0.0.1:6379`);
    const map: Record<string, string> = {};
    for (let i = 0; i < fields.length; i += 2) map[fields[i]!] = fields[i + 1]!;
    assert.equal(map[RESERVED_FIELD], body);
    assert.equal(map['x-tenant'], 'acme');
    assert.equal(map['webhook-id'], attempt.id);
    assert.deepEqual(new Webhook(SECRET).verify(map.body!, map), JSON.parse(body));
  });

  it('trims with MAXLEN ~ N when maxlen is given, and only then', async () => {
    const trimmed = streamKey();
    const kept = streamKey();
    const { t } = transport();
    for (let i = 0; i < 250; i++) {
      assert.equal(
        (await t.send(signedAttempt(`${SERVER}?stream=${trimmed}&maxlen=10`, `${i}`))).kind,
        'delivered',
      );
      assert.equal((await t.send(signedAttempt(`${SERVER}?stream=${kept}`, `${i}`))).kind, 'delivered');
    }
    const len = await admin.xLen(trimmed);
    assert.ok(len >= 10 && len < 250, `XLEN ${len}`);
    assert.equal(await admin.xLen(kept), 250);
  });

  it('refuses a key of another type by name, and keeps working', async () => {
    const key = streamKey();
    await admin.set(key, 'not a stream');
    const { t } = transport();
    const outcome = await t.send(signedAttempt(`${SERVER}?stream=${key}`, '{}'));
    assert.equal(outcome.kind, 'refused');
    assert.equal(outcome.text, `WRONGTYPE at key ${key} (it holds a string, not a stream)`);
    const good = streamKey();
    assert.equal((await t.send(signedAttempt(`${SERVER}?stream=${good}`, '{}'))).kind, 'delivered');
    assert.equal((await entries(good)).length, 1);
  });

  it('names wrong credentials and a missing database, with no password in the text, and does not crash', async () => {
    const { t } = transport();
    const key = streamKey();
    const bad = await t.send(signedAttempt(`redis://bob:s3cr3t-wrong@127.0.0.1:6379?stream=${key}`, '{}'));
    assert.equal(bad.kind, 'refused');
    assert.equal(bad.text, 'login refused by 127.0.0.1:6379 for user bob (WRONGPASS)');
    assert.doesNotMatch(bad.text, /s3cr3t/);
    const db = await t.send(signedAttempt(`${SERVER}/9999?stream=${key}`, '{}'));
    assert.equal(db.kind, 'refused');
    assert.equal(db.text, '127.0.0.1:6379 has no database 9999 (ERR DB index is out of range)');
    assert.equal((await t.send(signedAttempt(`${SERVER}?stream=${key}`, '{}'))).kind, 'delivered');
  });

  it('refuses a denied address without connecting', async () => {
    const relay = await startTcpRelay('127.0.0.1', 6379);
    try {
      const { t } = transport({ policy: new AddressPolicy() });
      const outcome = await t.send(signedAttempt(`redis://127.0.0.1:${relay.port}?stream=k`, '{}'));
      assert.equal(outcome.kind, 'refused');
      assert.equal(outcome.denied, true);
      assert.match(outcome.text, /127\.0\.0\.1, which is loopback .*--allow-callback-net 127\.0\.0\.0\/8/);
      assert.equal(relay.accepted, 0);
    } finally {
      await relay.close();
    }
  });

  it('gives retries while the server is cut off mid-burst, reconnects, tells onReconnect, then adds', async () => {
    const relay = await startTcpRelay('127.0.0.1', 6379);
    const key = streamKey();
    const { t, reconnects } = transport();
    const url = `redis://127.0.0.1:${relay.port}/0?stream=${key}`;
    const outcomes: SendOutcome[] = [];
    const pending: string[] = [];
    try {
      for (let i = 0; i < 40; i++) {
        if (i === 20) relay.cut();
        const o = await t.send(signedAttempt(url, `${i}`));
        outcomes.push(o);
        if (o.kind !== 'delivered') pending.push(`${i}`);
      }
      assert.equal(outcomes.slice(0, 20).filter((o) => o.kind === 'delivered').length, 20);
      const cut = outcomes.slice(20);
      assert.ok(
        cut.every((o) => o.kind === 'retry' && o.unreachable),
        JSON.stringify(cut[0]),
      );
      assert.equal(reconnects.length, 0);
      relay.restore();
      await until('onReconnect', () => reconnects.length > 0);
      assert.equal(reconnects[0], `redis://default@127.0.0.1:${relay.port}`);
      for (const body of pending) {
        const o = await t.send(signedAttempt(url, body));
        assert.equal(o.kind, 'delivered', o.text);
      }
      const bodies = new Set((await entries(key)).map(([, f]) => f[1]));
      assert.equal(bodies.size, 40);
    } finally {
      await relay.close();
    }
  });

  it('answers aborted at abortAll and after close(), which ends the connections', async () => {
    const relay = await startTcpRelay('127.0.0.1', 6379);
    try {
      const { t } = transport();
      const url = `redis://127.0.0.1:${relay.port}?stream=${streamKey()}`;
      assert.equal((await t.send(signedAttempt(url, '{}'))).kind, 'delivered');
      const inFlight = t.send(signedAttempt(url, '{}'));
      t.abortAll();
      assert.equal((await inFlight).aborted, true);
      await t.close();
      assert.equal((await t.send(signedAttempt(url, '{}'))).aborted, true);
      assert.equal(relay.accepted, 1);
    } finally {
      await relay.close();
    }
  });
});

describe('redis transport: keys, checks and descriptions', () => {
  const u = (s: string) => new URL(s);

  it('keys a receiver by scheme, user, host and port, never the password', () => {
    assert.equal(
      redisTransport.receiverKey(u('redis://bob:pw@Cache.example:6380/2?stream=s')),
      'redis://bob@cache.example:6380',
    );
    assert.equal(redisTransport.receiverKey(u('redis://h?stream=s')), 'redis://default@h:6379');
    assert.equal(
      redisTransport.receiverKey(u('redis://bob:one@h?stream=s')),
      redisTransport.receiverKey(u('redis://bob:two@h?stream=s')),
    );
  });

  it('describes a target without its password', () => {
    assert.equal(
      redisTransport.describe(u('redis://bob:s3cr3t@h:6379/0?stream=ts:$1&maxlen=1000')),
      'redis://bob@h:6379/0?stream=ts:$1&maxlen=1000',
    );
  });

  it('accepts the documented shapes and names the rule of a malformed one', () => {
    for (const s of [
      'redis://u:p@127.0.0.1:6379/0?stream=ts:$1&maxlen=10000',
      'redis://h?stream=events',
      'redis://h/15?stream=${REQUEST_METHOD}',
    ]) {
      assert.equal(redisTransport.check(u(s)), undefined, s);
    }
    assert.match(redisTransport.check(u('redis://h/0')) ?? '', /needs stream=KEY/);
    assert.match(redisTransport.check(u('redis://h/0?stream=')) ?? '', /needs stream=KEY/);
    assert.equal(
      redisTransport.check(u('redis://h/0?stream=s&maxln=5')),
      'the redis: URL has an unknown query parameter "maxln"; did you mean "maxlen"? (known: stream, maxlen)',
    );
    for (const bad of ['0', '-1', '1.5', 'ten', '007']) {
      assert.match(
        redisTransport.check(u(`redis://h?stream=s&maxlen=${bad}`)) ?? '',
        /maxlen must be a positive whole number/,
        bad,
      );
    }
    assert.match(redisTransport.check(u('redis://h/db1?stream=s')) ?? '', /path is the database number/);
    assert.match(redisTransport.check(u('redis://h?stream=s#x')) ?? '', /no #fragment/);
    assert.equal(RESERVED_FIELD, 'body');
  });

  it('escapes a template value so it stays one part of the key', () => {
    const esc = redisTransport.escapeValue!;
    const fill = (v: string) => new URL(`redis://h?stream=ts:${esc(v)}:read`).searchParams.get('stream');
    assert.equal(fill('ts1'), 'ts:ts1:read');
    assert.equal(fill('a:b'), 'ts:a%3Ab:read');
    assert.equal(fill('*?[]\\'), 'ts:%2A%3F%5B%5D%5C:read');
    assert.equal(fill('a b%'), 'ts:a%20b%25:read');
    assert.equal(fill('x&maxlen=1'), 'ts:x&maxlen=1:read');
    assert.equal(fill('a.b/ü'), 'ts:a.b/ü:read');
  });
});
