import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { STORE_FILE } from '../../src/daemon/open-store.js';
import { HookdError } from '../../src/errors/index.js';
import { attachPrincipal, sendProblem } from '../../src/http-api/index.js';
import { installIdempotency, SqliteIdempotencyStore } from '../../src/idempotency/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { api, startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { createHook, firedCalls, fireMark, type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// docs/API.md, Idempotency-Key: a repeat while the first request still runs waits for its answer
// (up to 5 s), then is 409 IDEMPOTENCY_KEY_IN_USE with `Retry-After: 1`; after a 5xx the key is
// let go, so that a retry runs again.

const REPORT = '/_hookd/report';
const served = { Method: 'POST', Path: '/orders/9', StatusCode: 201 };

describe('Idempotency-Key in use, in the daemon (SQLite)', () => {
  let receiver: Receiver;
  let d: TestDaemon;
  const dataDir = tempDir();

  before(async () => {
    receiver = await startReceiver();
    d = await startHookd({}, { dataDir });
    await createHook(d, { PathPattern: '/orders/(*)', Methods: ['POST'], Callback: `${receiver.url}/cb` });
  });
  after(async () => {
    await d.close();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a key claimed by another process and not yet answered: 409 IDEMPOTENCY_KEY_IN_USE, Retry-After: 1, nothing fired', {
    timeout: 60_000,
  }, async () => {
    // Another process on the same file (as a second instance would be) holds the key: it claimed
    // it for the same request and has not answered yet.
    const other = new SqliteStore(join(dataDir, STORE_FILE));
    try {
      const keys = new SqliteIdempotencyStore(other.db);
      // The request as hookd fingerprints it: method, route and the parsed JSON body.
      const fingerprint = createHash('sha256')
        .update(`POST ${REPORT}\n`)
        .update(JSON.stringify(served))
        .digest('hex');
      const claim = await keys.claim({
        owner: 'admin',
        key: 'held-elsewhere',
        fingerprint,
        now: Date.now(),
        ttlMs: 60_000,
        staleMs: 60_000,
      });
      assert.equal(claim.kind, 'claimed');
      const mark = await fireMark(d.opsUrl, receiver);
      const r = await api<{ code: string; status: number }>(d.url, d.token, 'POST', REPORT, served, {
        'Idempotency-Key': 'held-elsewhere',
      });
      assert.equal(r.status, 409, r.text);
      assert.equal(r.body.code, 'IDEMPOTENCY_KEY_IN_USE');
      assert.equal(r.headers.get('retry-after'), '1');
      assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
      // The other process answers: the repeat now gets that answer, and still fires nothing.
      await keys.complete('admin', 'held-elsewhere', fingerprint, {
        status: 202,
        contentType: 'application/json; charset=utf-8',
        body: '{"accepted":1,"fired":1}',
      });
      const again = await api(d.url, d.token, 'POST', REPORT, served, {
        'Idempotency-Key': 'held-elsewhere',
      });
      assert.equal(again.status, 202, again.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      // A marker fired after both: once it arrives, nothing else came from the two sends above.
      await api(d.url, d.token, 'POST', REPORT, { ...served, Path: '/orders/marker' });
      await until('the marker', () => receiver.calls.some((c) => c.body.includes('/orders/marker')));
      assert.equal((await firedCalls(d.opsUrl, receiver, mark)).length, 1, 'only the marker fired');
    } finally {
      await other.close();
    }
  });
});

describe('Idempotency-Key with a real store: in use, and let go after a 5xx', () => {
  let app: FastifyInstance;
  let base: string;
  let store: SqliteStore;
  const dir = tempDir();
  let runs = 0;
  let answer: 'ok' | 'fail' | 'hold' = 'ok';
  let release = () => {};
  let entered = false;

  before(async () => {
    store = new SqliteStore(join(dir, 'keys.db'));
    app = Fastify();
    // As the server's authentication hook does before any handler.
    app.addHook('onRequest', async (req) => attachPrincipal(req, { user: 'alice' }));
    // As the server maps hookd's errors: a problem document with the error's headers.
    app.setErrorHandler((err, _req, reply) =>
      sendProblem(reply, err instanceof HookdError ? err : new HookdError('INTERNAL', String(err))),
    );
    installIdempotency(app, {
      store: new SqliteIdempotencyStore(store.db),
      waitMs: 300,
      pruneIntervalMs: 0,
      applies: (req) => req.routeOptions.url === '/run',
    });
    app.post('/run', async (_req, reply) => {
      runs++;
      if (answer === 'fail') return reply.code(502).send({ failed: true });
      if (answer === 'hold') {
        entered = true;
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      }
      return reply.code(201).send({ run: runs });
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    release();
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const send = (key: string, body: unknown = { n: 1 }) =>
    api<{ code?: string; run?: number }>(base, undefined, 'POST', '/run', body, { 'Idempotency-Key': key });

  it('a repeat while the first still runs waits, then is 409 IDEMPOTENCY_KEY_IN_USE with Retry-After: 1', async () => {
    answer = 'hold';
    runs = 0;
    const first = send('slow');
    await until('the first request running', () => entered);
    const second = await send('slow');
    assert.equal(second.status, 409, second.text);
    assert.equal(second.body.code, 'IDEMPOTENCY_KEY_IN_USE');
    assert.equal(second.headers.get('retry-after'), '1');
    release();
    const done = await first;
    assert.equal(done.status, 201, done.text);
    // Once answered, a repeat replays that answer and runs nothing.
    const third = await send('slow');
    assert.equal(third.status, 201);
    assert.equal(third.text, done.text);
    assert.equal(third.headers.get('idempotent-replayed'), 'true');
    assert.equal(runs, 1);
  });

  it('after a 5xx the key is let go: the retry runs again, and its 2xx is kept', async () => {
    answer = 'fail';
    runs = 0;
    const failed = await send('flaky');
    assert.equal(failed.status, 502);
    answer = 'ok';
    const retried = await send('flaky');
    assert.equal(retried.status, 201, retried.text);
    assert.equal(retried.headers.get('idempotent-replayed'), null, 'the retry ran, not a replay');
    assert.equal(runs, 2);
    const replay = await send('flaky');
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(runs, 2);
  });
});
