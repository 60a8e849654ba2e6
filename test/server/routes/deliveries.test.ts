import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { Hook } from '../../../src/hook/hook.js';
import { api, startHookd, type TestDaemon } from '../../helpers/hookd.js';
import { addUser, createHook, type Receiver, startReceiver } from '../../helpers/servers.js';
import { until } from '../../helpers/until.js';

// The delivery routes of a real hookd (its own assembly: hook service, pipeline, hook state and
// API), with two users, under an API base of /api. Every hook makes one attempt (RetrySchedule
// [0]) to a receiver that answers 500 unless `failing` is off.

// biome-ignore lint/suspicious/noExplicitAny: the JSON answers of the API under test
type Json = any;

interface Res {
  status: number;
  headers: Headers;
  body: Json;
}

let d: TestDaemon;
let base: string;
let receiver: Receiver;
let alice: string;
let bob: string;
let failing = true;

async function call(token: string, method: string, path: string, body?: unknown): Promise<Res> {
  const r = await api<Json>(base, token, method, path, body);
  return { status: r.status, headers: r.headers, body: r.body };
}

/** Reports `path` as served (GET, 200) on behalf of the hook's owner: the hook fires. */
async function fire(hook: Hook, path: string): Promise<void> {
  const token = hook.Owner === 'bob' ? bob : alice;
  const r = await call(token, 'POST', '/_hookd/report', { Method: 'GET', Path: path, StatusCode: 200 });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.equal(r.body.fired, 1, `${path} fires the one hook of this test`);
}

/** Waits until the hook has `n` deliveries and none is pending. */
async function settled(hook: Hook, n: number): Promise<void> {
  const token = hook.Owner === 'bob' ? bob : alice;
  await until(
    `${n} deliveries of ${hook.Id} ended`,
    async () => (await call(token, 'GET', `/hooks/${hook.Id}/deliveries?limit=100`)).body,
    (l: Json[]) => Array.isArray(l) && l.length === n && l.every((x) => x.Status !== 'pending'),
  );
}

async function newHook(
  owner: 'alice' | 'bob',
  path: string,
  extra: Record<string, unknown> = {},
): Promise<Hook> {
  return createHook(
    d,
    {
      PathPattern: '/repositories/*/timeseries/(*)',
      Callback: `${receiver.url}${path}`,
      Methods: ['GET'],
      CallbackContent: '{"path":"$REQUEST_PATH"}',
      RetrySchedule: [0],
      ...extra,
    },
    { token: owner === 'bob' ? bob : alice, apiBase: '/api' },
  );
}

before(async () => {
  receiver = await startReceiver({
    reply: () => ({ status: failing ? 500 : 200, body: failing ? 'nope' : 'ok' }),
  });
  d = await startHookd({ apiBase: '/api' });
  base = `${d.url}/api`;
  alice = await addUser(d, 'alice');
  bob = await addUser(d, 'bob');
});

// One test's hooks never fire for another's reports: every hook is removed after its test.
afterEach(async () => {
  for (const token of [alice, bob]) {
    for (const h of (await call(token, 'GET', '/hooks')).body as Hook[])
      await call(token, 'DELETE', `/hooks/${h.Id}`);
  }
});

after(async () => {
  await d.close();
  await receiver.close();
});

describe('delivery routes', () => {
  it("lists a hook's deliveries newest first, filtered and paged with Link", async () => {
    const hook = await newHook('alice', '/list');
    for (let i = 0; i < 5; i++) await fire(hook, `/repositories/r1/timeseries/ts${i}`);
    await settled(hook, 5);

    const all = await call(alice, 'GET', `/hooks/${hook.Id}/deliveries`);
    assert.equal(all.status, 200);
    assert.equal(all.body.length, 5);
    assert.deepEqual(
      all.body.map((d: Json) => d.Trigger.Path),
      [4, 3, 2, 1, 0].map((i) => `/repositories/r1/timeseries/ts${i}`),
    );
    const d = all.body[0];
    assert.match(d.Id, /^msg_/);
    assert.equal(d.HookId, hook.Id);
    assert.equal(d.Status, 'failed');
    assert.equal(d.Attempts, 1);
    assert.equal(d.LastStatusCode, 500);
    assert.equal(d.NextAttempt, null);
    assert.match(d.Created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    assert.deepEqual(d.Request, {
      Method: 'POST',
      Url: `${receiver.url}/list`,
      ContentType: 'application/json',
      Body: '{"path":"/repositories/r1/timeseries/ts4"}',
    });

    const page1 = await call(alice, 'GET', `/hooks/${hook.Id}/deliveries?limit=2&status=failed`);
    assert.equal(page1.body.length, 2);
    const link = page1.headers.get('link')!;
    assert.match(
      link,
      /^<\/api\/hooks\/hk_[^>]+\/deliveries\?limit=2&after=msg_[^&]+&status=failed>; rel="next"$/,
    );
    const next = link.slice(link.indexOf('/hooks'), link.indexOf('>'));
    const page2 = await call(alice, 'GET', next);
    assert.deepEqual(
      [...page1.body, ...page2.body].map((x: Json) => x.Id),
      all.body.slice(0, 4).map((x: Json) => x.Id),
    );
    assert.equal((await call(alice, 'GET', `/hooks/${hook.Id}/deliveries?status=succeeded`)).body.length, 0);
    const future = await call(alice, 'GET', `/hooks/${hook.Id}/deliveries?since=2999-01-01T00:00:00Z`);
    assert.deepEqual(future.body, []);

    const bad = await call(alice, 'GET', `/hooks/${hook.Id}/deliveries?status=lost&limit=0&since=yesterday`);
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.errors.map((e: Json) => e.field).sort(), ['limit', 'since', 'status']);
  });

  it('shows one delivery with its attempt log', async () => {
    const hook = await newHook('alice', '/one');
    await fire(hook, '/repositories/r1/timeseries/one');
    await settled(hook, 1);
    const [listed] = (await call(alice, 'GET', `/hooks/${hook.Id}/deliveries`)).body;
    const one = await call(alice, 'GET', `/_hookd/deliveries/${listed.Id}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.Id, listed.Id);
    assert.equal(one.body.AttemptLog.length, 1);
    const a = one.body.AttemptLog[0];
    assert.equal(a.Attempt, 1);
    assert.equal(a.StatusCode, 500);
    assert.equal(a.ResponseBody, 'nope');
    assert.equal(a.Error, null);
    assert.equal(typeof a.LatencyMs, 'number');
    assert.match(a.Time, /\+00:00$/);
  });

  it('redelivers one delivery and in bulk, answering 202', async () => {
    const hook = await newHook('alice', '/again');
    for (const x of ['a', 'b', 'c']) await fire(hook, `/repositories/r1/timeseries/${x}`);
    await settled(hook, 3);
    const failed = (await call(alice, 'GET', `/hooks/${hook.Id}/deliveries?status=failed`)).body;
    assert.equal(failed.length, 3);
    failing = false;
    try {
      const one = await call(alice, 'POST', `/_hookd/deliveries/${failed[0].Id}/redeliver`);
      assert.equal(one.status, 202);
      assert.equal(one.body.Id, failed[0].Id);
      assert.equal(one.body.Status, 'pending');
      await settled(hook, 3);
      const again = await call(alice, 'GET', `/_hookd/deliveries/${failed[0].Id}`);
      assert.equal(again.body.Status, 'succeeded');
      assert.equal(again.body.AttemptLog.length, 2);

      const bulk = await call(alice, 'POST', `/hooks/${hook.Id}/redeliver`, { status: 'failed' });
      assert.equal(bulk.status, 202);
      assert.deepEqual(bulk.body, { queued: 2, pending: 0, failed: 0 });
      await settled(hook, 3);
      const none = await call(alice, 'POST', `/hooks/${hook.Id}/redeliver`, { status: 'failed' });
      assert.deepEqual(none.body, { queued: 0, pending: 0, failed: 0 }, 'none failed are left');
      const all = await call(alice, 'POST', `/hooks/${hook.Id}/redeliver`, { dryRun: true });
      assert.equal(all.status, 200);
      assert.deepEqual(
        all.body,
        { queued: 3, pending: 0, failed: 0, dryRun: true },
        'no filter means every delivery',
      );

      const bad = await call(alice, 'POST', `/hooks/${hook.Id}/redeliver`, { Status: 'failed', until: 'x' });
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.body.errors.map((e: Json) => e.field).sort(), ['Status', 'until']);
    } finally {
      failing = true;
    }
  });

  it('hands out the signing secret and rotates it', async () => {
    const hook = await newHook('alice', '/sig');
    const got = await call(alice, 'GET', `/hooks/${hook.Id}/secret`);
    assert.equal(got.status, 200);
    assert.match(got.body.Secret, /^whsec_/);
    assert.equal((await call(alice, 'GET', `/hooks/${hook.Id}/secret`)).body.Secret, got.body.Secret);
    const rotated = await call(alice, 'POST', `/hooks/${hook.Id}/secret/rotate`);
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.body.Secret, got.body.Secret);
    assert.ok(Date.parse(rotated.body.PreviousValidUntil) > Date.now());
    const before = receiver.calls.length;
    await fire(hook, '/repositories/r1/timeseries/signed');
    const calls = await receiver.waitFor(before + 1);
    const c = calls[before]!;
    new Webhook(got.body.Secret).verify(c.body, c.headers as Record<string, string>);
    new Webhook(rotated.body.Secret).verify(c.body, c.headers as Record<string, string>);
  });

  it("answers 404 for another user's hook or delivery, and for unknown ids", async () => {
    const hook = await newHook('alice', '/private');
    await fire(hook, '/repositories/r1/timeseries/p');
    await settled(hook, 1);
    const [d] = (await call(alice, 'GET', `/hooks/${hook.Id}/deliveries`)).body;
    for (const [method, path] of [
      ['GET', `/hooks/${hook.Id}/deliveries`],
      ['GET', `/_hookd/deliveries/${d.Id}`],
      ['POST', `/_hookd/deliveries/${d.Id}/redeliver`],
      ['POST', `/hooks/${hook.Id}/redeliver`],
      ['GET', `/hooks/${hook.Id}/secret`],
      ['POST', `/hooks/${hook.Id}/secret/rotate`],
    ] as const) {
      const res = await call(bob, method, path);
      assert.equal(res.status, 404, `${method} ${path}`);
      if (path.startsWith('/_hookd/deliveries/')) {
        assert.ok(
          !JSON.stringify(res.body).includes(hook.Id),
          'the hook Id behind a delivery is not revealed',
        );
      }
    }
    assert.equal((await call(alice, 'GET', '/_hookd/deliveries/msg_00000000000000000000000000')).status, 404);
    assert.equal((await call(alice, 'GET', '/_hookd/deliveries/not-an-id')).status, 404);
    const wrong = await call(alice, 'DELETE', `/_hookd/deliveries/${d.Id}`);
    assert.equal(wrong.status, 405);
  });

  it('refuses redelivery for a hook disabled by 410 with 409', async () => {
    const gone = await startReceiver({ reply: () => ({ status: 410 }) });
    try {
      const hook = await newHook('alice', '/gone', { PathPattern: '/x', Callback: `${gone.url}/gone` });
      await fire(hook, '/x');
      await until(
        'the hook to be disabled',
        async () => (await call(alice, 'GET', `/hooks/${hook.Id}`)).body.State === 'disabled',
      );
      const [d] = (await call(alice, 'GET', `/hooks/${hook.Id}/deliveries`)).body;
      assert.equal(d.LastStatusCode, 410);
      const res = await call(alice, 'POST', `/_hookd/deliveries/${d.Id}/redeliver`);
      assert.equal(res.status, 409);
      assert.match(res.body.detail, /disabled/);
    } finally {
      await gone.close();
    }
  });
});
