import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ForwardAuthProvider } from '../../src/identity/forward-auth-provider.js';
import { type ForwardAuthServer, identityRequest, startForwardAuth } from './identity-helpers.js';

describe('forward-auth provider (real endpoint on loopback)', () => {
  let endpoint: ForwardAuthServer;
  before(async () => {
    endpoint = await startForwardAuth();
  });
  beforeEach(() => {
    endpoint.mode = '200';
    endpoint.calls.length = 0;
  });
  after(async () => endpoint.close());

  const fresh = (over: Partial<ConstructorParameters<typeof ForwardAuthProvider>[0]> = {}) =>
    new ForwardAuthProvider({ url: endpoint.url, timeoutMs: 500, ...over });

  it("sends the caller's Authorization and Cookie; a 2xx with X-User identifies", async () => {
    const p = fresh();
    assert.deepEqual(await p.identify(identityRequest({ authorization: 'Bearer alice', cookie: 'a=1' })), {
      kind: 'user',
      user: 'alice',
    });
    assert.deepEqual(endpoint.calls, [{ authorization: 'Bearer alice', cookie: 'a=1' }]);
    assert.deepEqual(await p.identify(identityRequest({ cookie: 'session=bob' })), {
      kind: 'user',
      user: 'bob',
    });
  });

  it('401 and 403 refuse; 500, a 2xx without the user header and a hang are unavailable', async () => {
    const creds = identityRequest({ authorization: 'Bearer alice' });
    endpoint.mode = '401';
    assert.equal((await fresh().identify(creds)).kind, 'refused');
    endpoint.mode = '403';
    assert.equal((await fresh().identify(creds)).kind, 'refused');
    endpoint.mode = '500';
    const r500 = await fresh().identify(creds);
    assert.equal(r500.kind, 'unavailable');
    assert.match((r500 as { reason: string }).reason, /500/);
    endpoint.mode = '200-no-user';
    const noUser = await fresh().identify(creds);
    assert.equal(noUser.kind, 'unavailable');
    assert.match((noUser as { reason: string }).reason, /X-User/);
    endpoint.mode = 'hang';
    const started = Date.now();
    const hang = await fresh({ timeoutMs: 300 }).identify(creds);
    assert.equal(hang.kind, 'unavailable');
    assert.match((hang as { reason: string }).reason, /300 ms/);
    assert.ok(Date.now() - started < 5000, 'the timeout ends the wait');
  });

  it('a custom user header', async () => {
    const p = fresh({ userHeader: 'X-Remote-User' });
    const r = await p.identify(identityRequest({ authorization: 'Bearer alice' }));
    assert.equal(r.kind, 'unavailable', 'X-User is not the header asked for');
  });

  it('no credentials: anonymous without asking', async () => {
    assert.deepEqual(await fresh().identify(identityRequest()), { kind: 'anonymous' });
    assert.equal(endpoint.calls.length, 0);
  });

  it('caches answers for the TTL, keyed by a hash of the credentials, never the credentials', async () => {
    let now = 1_000_000;
    const p = fresh({ ttlMs: 30_000, now: () => now });
    const alice = identityRequest({ authorization: 'Bearer alice', cookie: 'sid=SECRET-COOKIE' });
    for (let i = 0; i < 5; i++) assert.deepEqual(await p.identify(alice), { kind: 'user', user: 'alice' });
    assert.equal(endpoint.calls.length, 1, 'one call for five identical asks');
    endpoint.mode = '401';
    const nobody = identityRequest({ authorization: 'Bearer nobody' });
    assert.equal((await p.identify(nobody)).kind, 'refused');
    assert.equal((await p.identify(nobody)).kind, 'refused');
    assert.equal(endpoint.calls.length, 2, 'a refusal is cached too');
    const keys = [...(p as unknown as { cache: Map<string, unknown> }).cache.keys()];
    assert.equal(keys.length, 2);
    for (const k of keys) {
      assert.doesNotMatch(k, /alice|nobody|SECRET|Bearer/);
      assert.match(k, /^[A-Za-z0-9_-]{43}$/, 'a SHA-256, base64url');
    }
    // After the TTL the endpoint is asked again (and now says 401 for alice too).
    now += 30_001;
    assert.equal((await p.identify(alice)).kind, 'refused');
    assert.equal(endpoint.calls.length, 3);
  });

  it('an unavailable answer is not cached; concurrent asks share one call', async () => {
    const p = fresh();
    const creds = identityRequest({ authorization: 'Bearer carol' });
    endpoint.mode = '500';
    assert.equal((await p.identify(creds)).kind, 'unavailable');
    endpoint.mode = '200';
    assert.deepEqual(await p.identify(creds), { kind: 'user', user: 'carol' });
    assert.equal(endpoint.calls.length, 2);
    const dave = identityRequest({ authorization: 'Bearer dave' });
    const all = await Promise.all(Array.from({ length: 10 }, () => fresh().identify(dave)));
    assert.equal(all.length, 10);
    endpoint.calls.length = 0;
    const shared = fresh();
    await Promise.all(Array.from({ length: 10 }, () => shared.identify(dave)));
    assert.equal(endpoint.calls.length, 1);
  });

  it('an endpoint nobody listens on is unavailable', async () => {
    const p = new ForwardAuthProvider({ url: 'http://127.0.0.1:1/auth', timeoutMs: 1000 });
    assert.equal((await p.identify(identityRequest({ authorization: 'Bearer a' }))).kind, 'unavailable');
  });
});
