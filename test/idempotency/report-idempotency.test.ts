import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import {
  addUser,
  createHook,
  firedCalls,
  fireMark,
  type Receiver,
  startReceiver,
} from '../helpers/servers.js';

// POST /_hookd/report with an Idempotency-Key: five sends fire once, also across a restart of a
// SQLite daemon; another body with the key is 422; keys are per user; a bad key is 400.

const REPORT = '/_hookd/report';
const served = { Method: 'POST', Path: '/orders/1', StatusCode: 201 };

describe('idempotent reports (SQLite)', () => {
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

  it('the same report sent 5 times with one key fires once; repeats replay the first answer', async () => {
    const mark = await fireMark(d.opsUrl, receiver);
    const answers = [];
    for (let i = 0; i < 5; i++) {
      answers.push(
        await api(d.url, d.token, 'POST', REPORT, served, { 'Idempotency-Key': 'order-1-created' }),
      );
    }
    for (const a of answers) {
      assert.equal(a.status, 202, a.text);
      assert.equal(a.text, answers[0]!.text);
    }
    assert.deepEqual(answers[0]!.body, { accepted: 1, fired: 1 });
    assert.equal(answers[0]!.headers.get('idempotent-replayed'), null);
    for (const a of answers.slice(1)) assert.equal(a.headers.get('idempotent-replayed'), 'true');
    await receiver.waitFor(1);
    assert.equal((await firedCalls(d.opsUrl, receiver, mark)).length, 1);
  });

  it('the same key with a different body is 422 IDEMPOTENCY_KEY_REUSED and fires nothing', async () => {
    const mark = await fireMark(d.opsUrl, receiver);
    const r = await api<{ code: string; type: string }>(
      d.url,
      d.token,
      'POST',
      REPORT,
      { ...served, Path: '/orders/2' },
      { 'Idempotency-Key': 'order-1-created' },
    );
    assert.equal(r.status, 422, r.text);
    assert.equal(r.body.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal((await firedCalls(d.opsUrl, receiver, mark)).length, 1);
  });

  it('keys are per user: another user may use the same key for its own report', async () => {
    const bob = await addUser(d, 'bob-idem');
    const r = await api(
      d.url,
      bob,
      'POST',
      REPORT,
      { ...served, Path: '/other' },
      { 'Idempotency-Key': 'order-1-created' },
    );
    assert.equal(r.status, 202, r.text);
    assert.equal(r.headers.get('idempotent-replayed'), null);
  });

  it('a malformed key is 400 naming the header; without a key every send fires', async () => {
    const bad = await api<{ errors: { field: string }[] }>(d.url, d.token, 'POST', REPORT, served, {
      'Idempotency-Key': 'x'.repeat(256),
    });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.errors[0]!.field, 'Idempotency-Key');
    receiver.reset();
    await api(d.url, d.token, 'POST', REPORT, served);
    await api(d.url, d.token, 'POST', REPORT, served);
    await receiver.waitFor(2);
  });

  it('invalid reports are answered alike on a repeat (4xx kept), and fire nothing', async () => {
    const first = await api(
      d.url,
      d.token,
      'POST',
      REPORT,
      { Method: 'POST' },
      { 'Idempotency-Key': 'bad-report' },
    );
    const again = await api(
      d.url,
      d.token,
      'POST',
      REPORT,
      { Method: 'POST' },
      { 'Idempotency-Key': 'bad-report' },
    );
    assert.equal(first.status, 400);
    assert.equal(again.status, 400);
    assert.equal(again.text, first.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
  });

  it('after a restart the key still replays and nothing fires again', async () => {
    receiver.reset();
    await d.close();
    d = await startHookd({}, { dataDir });
    const mark = await fireMark(d.opsUrl, receiver);
    for (let i = 0; i < 5; i++) {
      const r = await api(d.url, d.token, 'POST', REPORT, served, { 'Idempotency-Key': 'order-1-created' });
      assert.equal(r.status, 202, r.text);
      assert.equal(r.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(r.body, { accepted: 1, fired: 1 });
    }
    assert.equal((await firedCalls(d.opsUrl, receiver, mark)).length, 0);
  });

  it('concurrent duplicates: one runs, the others wait for its answer', async () => {
    receiver.reset();
    const mark = await fireMark(d.opsUrl, receiver);
    const all = await Promise.all(
      Array.from({ length: 6 }, () =>
        api(d.url, d.token, 'POST', REPORT, { ...served, Path: '/orders/9' }, { 'Idempotency-Key': 'burst' }),
      ),
    );
    for (const r of all) assert.equal(r.status, 202, r.text);
    assert.equal(all.filter((r) => r.headers.get('idempotent-replayed') === 'true').length, 5);
    await receiver.waitFor(1);
    assert.equal((await firedCalls(d.opsUrl, receiver, mark)).length, 1);
  });
});
