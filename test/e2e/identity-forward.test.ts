import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import {
  createHook,
  type Receiver,
  send,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { type ForwardAuthServer, startForwardAuth } from '../identity/identity-helpers.js';

// Forward auth through a real hookd: the endpoint answers 200 (X-User), 401, 500 or hangs; the
// API follows it (never "allow" on a failure), and proxied requests ask it only when a hook
// matched, without holding a BeforeCompletion request up.

let endpoint: ForwardAuthServer;
let upstream: Upstream;
let receiver: Receiver;
let d: TestDaemon;

const bearer = (user: string) => ({ authorization: `Bearer ${user}` });

before(async () => {
  endpoint = await startForwardAuth();
  upstream = await startUpstream();
  receiver = await startReceiver();
  d = await startHookd({
    upstream: upstream.url,
    identityForwardUrl: endpoint.url,
    identityForwardTimeoutMs: 1000,
    identityForwardTtlMs: 0,
  });
});
after(async () => {
  await d?.close();
  await Promise.all([endpoint?.close(), upstream?.close(), receiver?.close()]);
});
beforeEach(() => {
  endpoint.mode = '200';
  endpoint.calls.length = 0;
  receiver.reset();
});

describe('API through forward auth', () => {
  it('200 with X-User identifies (the user is created), 401 is 401, 500 and a hang are 503', async () => {
    const ok = await api(d.url, undefined, 'GET', '/hooks', undefined, bearer('alice'));
    assert.equal(ok.status, 200, ok.text);
    assert.ok(await d.hookd.store.getUser('alice'));
    assert.deepEqual(endpoint.calls, [{ authorization: 'Bearer alice' }]);
    const cookie = await api(d.url, undefined, 'GET', '/hooks', undefined, { cookie: 'session=bob' });
    assert.equal(cookie.status, 200, 'a session cookie identifies too');

    endpoint.mode = '401';
    const refused = await api<{ code: string }>(
      d.url,
      undefined,
      'GET',
      '/hooks',
      undefined,
      bearer('alice'),
    );
    assert.equal(refused.status, 401);
    assert.equal(refused.body.code, 'UNAUTHENTICATED');

    endpoint.mode = '500';
    const down = await api<{ code: string; detail: string }>(
      d.url,
      undefined,
      'GET',
      '/hooks',
      undefined,
      bearer('alice'),
    );
    assert.equal(down.status, 503);
    assert.equal(down.body.code, 'IDENTITY_UNAVAILABLE');
    assert.match(down.body.detail, /500/);

    endpoint.mode = 'hang';
    const started = Date.now();
    const hung = await api<{ code: string; detail: string }>(
      d.url,
      undefined,
      'GET',
      '/hooks',
      undefined,
      bearer('alice'),
    );
    assert.equal(hung.status, 503);
    assert.equal(hung.body.code, 'IDENTITY_UNAVAILABLE');
    assert.match(hung.body.detail, /1000 ms/);
    assert.ok(Date.now() - started < 8000);

    assert.equal(
      (await api(d.url, d.token, 'GET', '/hooks')).status,
      200,
      'the admin token needs no endpoint',
    );
  });
});

describe('proxied requests', () => {
  it('ask the endpoint only when a hook matched', async () => {
    const watched = await createHook(d, {
      PathPattern: '/watched',
      Methods: ['GET'],
      Callback: `${receiver.url}/cb`,
      CallbackContent: 'user=$REQUEST_USER',
      CallbackContentMediaType: 'text/plain',
      Type: 1,
    });
    endpoint.calls.length = 0;
    for (let i = 0; i < 5; i++)
      assert.equal((await send(`${d.url}/unwatched/${i}`, { headers: bearer('carol') })).status, 200);
    // Asked, it is while the request is served: answered, these asked nobody (and the one
    // request below that does ask is counted once at the end).
    assert.equal(endpoint.calls.length, 0, 'no hook matched: nobody asked');
    assert.equal((await send(`${d.url}/watched`, { headers: bearer('carol') })).status, 200);
    // AfterCompletion: the callbacks are recorded before the response ends, provider or not.
    const recorded = await api<{ Trigger: { User: string | null } }[]>(
      d.url,
      d.token,
      'GET',
      `/hooks/${watched.Id}/deliveries`,
    );
    assert.deepEqual(
      recorded.body.map((x) => x.Trigger.User),
      ['carol'],
      'recorded, with its user, when the response ended',
    );
    const [call] = await receiver.waitFor(1);
    assert.equal(call!.body, 'user=carol');
    assert.equal(endpoint.calls.length, 1);
  });

  it('a slow endpoint never holds a BeforeCompletion request up; the hook fires once it is known', async () => {
    // A daemon whose endpoint timeout outlasts the test: the response comes while the endpoint
    // still holds the question, so it cannot have waited for the answer.
    const slow = await startHookd({
      upstream: upstream.url,
      identityForwardUrl: endpoint.url,
      identityForwardTimeoutMs: 600_000,
      identityForwardTtlMs: 0,
    });
    try {
      await createHook(slow, {
        PathPattern: '/before',
        Methods: ['GET'],
        Callback: `${receiver.url}/before`,
        CallbackContent: 'user=$REQUEST_USER',
        CallbackContentMediaType: 'text/plain',
        Type: 0,
      });
      endpoint.mode = 'hang';
      const res = await send(`${slow.url}/before`, { headers: bearer('dave') });
      assert.equal(res.status, 200);
      assert.equal(receiver.calls.length, 0, 'not fired before the identity is known');
      await until('the endpoint asked about dave', () => endpoint.calls.length === 1);
      endpoint.release();
      const [call] = await receiver.waitFor(1);
      assert.equal(call!.body, 'user=dave', 'fired once the endpoint answered, as that user');
    } finally {
      endpoint.release();
      await slow.close();
    }
  });

  it('an endpoint that does not answer in time counts as anonymous; a refusal too', async () => {
    await createHook(d, {
      PathPattern: '/before-timeout',
      Methods: ['GET'],
      Callback: `${receiver.url}/before`,
      CallbackContent: 'user=$REQUEST_USER',
      CallbackContentMediaType: 'text/plain',
      Type: 0,
    });
    endpoint.mode = 'hang';
    const res = await send(`${d.url}/before-timeout`, { headers: bearer('dave') });
    assert.equal(res.status, 200);
    // The endpoint times out after 1 s: unavailable counts as anonymous, and the hook fires.
    const [call] = await receiver.waitFor(1, 5000);
    assert.equal(call!.body, 'user=');
    endpoint.mode = '401';
    await send(`${d.url}/before-timeout`, { headers: bearer('nobody') });
    assert.equal((await receiver.waitFor(2))[1]!.body, 'user=', 'refused: anonymous');
  });
});
