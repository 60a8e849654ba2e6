import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Hook } from '../../src/hook/hook.js';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook, type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// docs/API.md, redelivery: a pending delivery redelivered is brought forward (same Id, sent now
// instead of at its next retry); bulk redelivery does not queue a pending one twice but counts it
// in `pending`.

interface View {
  Id: string;
  Status: string;
  Attempts: number;
  NextAttempt: string | null;
}

let d: TestDaemon;
let rcv: Receiver;
/** Paths that answer 500 (the rest answer 200). */
const failing = new Set<string>();
let hook: Hook;

before(async () => {
  rcv = await startReceiver({ reply: (c) => (failing.has(c.url) ? { status: 500 } : { status: 200 }) });
  d = await startHookd();
  // The retry after a failure is an hour away: only a redelivery can send it sooner.
  hook = await createHook(d, {
    PathPattern: '/pending/(*)',
    Methods: ['GET'],
    Callback: `${rcv.url}/p`,
    CallbackContent: '$1',
    RetrySchedule: [0, 3600],
  });
});
after(async () => {
  await d.close();
  await rcv.close();
});

const view = async (id: string) => (await api<View>(d.url, d.token, 'GET', `/_hookd/deliveries/${id}`)).body;
const callsOf = (id: string) => rcv.calls.filter((c) => c.headers['webhook-id'] === id);

/** Fires `/pending/NAME`, lets its first attempt fail, and returns the delivery's Id. */
async function pendingDelivery(name: string): Promise<string> {
  failing.add('/p');
  const before = rcv.calls.length;
  const r = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', {
    Method: 'GET',
    Path: `/pending/${name}`,
    StatusCode: 200,
  });
  assert.equal(r.body.fired, 1, r.text);
  await until('the first attempt', () => rcv.calls.slice(before).find((c) => c.body === name));
  const id = rcv.calls.slice(before).find((c) => c.body === name)!.headers['webhook-id'] as string;
  await until(
    'the delivery pending, its retry an hour away',
    () => view(id),
    (v) => v.Status === 'pending' && v.Attempts === 1 && v.NextAttempt !== null,
  );
  failing.delete('/p');
  return id;
}

describe('redelivery of a pending delivery', () => {
  it('is brought forward: sent now under the same Id, not at its next retry', async () => {
    const id = await pendingDelivery('one');
    const v = await view(id);
    assert.ok(Date.parse(v.NextAttempt!) - Date.now() > 30 * 60_000, `next attempt ${v.NextAttempt}`);
    const r = await api<View>(d.url, d.token, 'POST', `/_hookd/deliveries/${id}/redeliver`);
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.Id, id);
    await until('the redelivered attempt', () => callsOf(id).length === 2);
    const done = await until(
      'the delivery to succeed',
      () => view(id),
      (x) => x.Status === 'succeeded',
    );
    assert.equal(done.Attempts, 2);
    assert.equal(done.NextAttempt, null, 'no retry left scheduled');
  });

  it('bulk redelivery counts a pending delivery in `pending` and does not send it again', async () => {
    // One finished delivery (from the test above, or this one) and one pending.
    const ok = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', {
      Method: 'GET',
      Path: '/pending/done',
      StatusCode: 200,
    });
    assert.equal(ok.body.fired, 1);
    await until('the finished one', () => rcv.calls.some((c) => c.body === 'done'));
    const waiting = await pendingDelivery('waiting');
    const finished = (await api<View[]>(d.url, d.token, 'GET', `/hooks/${hook.Id}/deliveries?limit=100`)).body
      .filter((x) => x.Id !== waiting)
      .map((x) => x.Id);
    await until('every other delivery finished', async () =>
      (await Promise.all(finished.map(view))).every((x) => x.Status !== 'pending'),
    );
    const r = await api<{ queued: number; pending: number }>(
      d.url,
      d.token,
      'POST',
      `/hooks/${hook.Id}/redeliver`,
      {},
    );
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.pending, 1, 'the pending delivery is counted, not queued');
    assert.equal(r.body.queued, finished.length);
    // The queued ones arrive again; by then the pending one has not been sent a second time.
    for (const id of finished) await until(`${id} sent again`, () => callsOf(id).length >= 2);
    assert.equal(callsOf(waiting).length, 1, 'the pending delivery was not queued twice');
    assert.equal((await view(waiting)).Status, 'pending');
  });
});
