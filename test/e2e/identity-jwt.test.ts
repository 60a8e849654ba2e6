import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import type { Hook } from '../../src/hook/hook.js';
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
import { assertBuilt, cleanEnv, hookctl } from '../hookctl/helpers.js';
import {
  AUDIENCE,
  ISSUER,
  type JwksServer,
  makeKey,
  sign,
  startJwks,
  type TestKey,
} from '../identity/identity-helpers.js';

// A hookd in front of a service whose users carry JWTs from its identity provider (a real JWKS
// on loopback): the API, the tail and the proxied requests' $REQUEST_USER all use them.

let jwks: JwksServer;
let rsa: TestKey;
let ec: TestKey;
let upstream: Upstream;
let receiver: Receiver;
let d: TestDaemon;
let carol: string;
let dave: string;
let userHook: Hook;
let docHook: Hook;

const auth = (t: string) => ({ authorization: `Bearer ${t}` });

before(async () => {
  rsa = await makeKey('RS256', 'rsa');
  ec = await makeKey('ES256', 'ec');
  jwks = await startJwks([rsa, ec]);
  upstream = await startUpstream();
  receiver = await startReceiver();
  d = await startHookd({
    upstream: upstream.url,
    identityJwtJwksUrl: jwks.url,
    identityJwtIssuer: ISSUER,
    identityJwtAudience: AUDIENCE,
  });
  carol = await sign(rsa, { sub: 'carol' });
  dave = await sign(ec, { sub: 'dave' });
  userHook = await createHook(
    d,
    {
      PathPattern: '/repositories',
      Methods: ['*'],
      Callback: `${receiver.url}/user`,
      CallbackContent: '{"user":"$REQUEST_USER","uri":"$REQUEST_URI"}',
      Type: 0,
    },
    { token: carol },
  );
  docHook = await createHook(
    d,
    { PathPattern: '/docs', Methods: ['GET'], Callback: `${receiver.url}/doc`, Type: 1 },
    { token: carol },
  );
  // carol was created on first sight with ["own"]; these tests watch other users' requests too
  // (scopes have their own tests in test/users/), so the admin grants her every path; and reports
  // and dry runs made in other users' names (that takes the report permission).
  const grant = await api(d.url, d.token, 'PUT', '/_hookd/users/carol', {
    Scopes: ['/'],
    Permissions: ['report'],
  });
  assert.equal(grant.status, 200, grant.text);
});
after(async () => {
  await d?.close();
  await Promise.all([jwks?.close(), upstream?.close(), receiver?.close()]);
});

describe('API through a JWT', () => {
  it('a JWT user is created on first sight and owns what it creates', async () => {
    assert.equal(userHook.Owner, 'carol');
    assert.ok(await d.hookd.store.getUser('carol'));
    const mine = await api<Hook[]>(d.url, carol, 'GET', '/hooks');
    assert.equal(mine.status, 200, mine.text);
    assert.deepEqual(mine.body.map((h) => h.Id).sort(), [userHook.Id, docHook.Id].sort());
    const theirs = await api<Hook[]>(d.url, dave, 'GET', '/hooks');
    assert.deepEqual(theirs.body, [], "dave sees none of carol's hooks");
    assert.equal((await api(d.url, dave, 'GET', `/hooks/${userHook.Id}`)).status, 404);
  });

  it('bad JWTs get 401, the admin token still works', async () => {
    const expired = await sign(rsa, { sub: 'carol' }, { exp: Math.floor(Date.now() / 1000) - 3600 });
    const r = await api<{ detail: string }>(d.url, expired, 'GET', '/hooks');
    assert.equal(r.status, 401);
    assert.match(r.body.detail, /refused/);
    assert.equal(
      (await api(d.url, await sign(rsa, { sub: 'carol', aud: 'other' }), 'GET', '/hooks')).status,
      401,
    );
    assert.equal((await api(d.url, undefined, 'GET', '/hooks')).status, 401);
    assert.equal((await api(d.url, d.token, 'GET', '/hooks')).status, 200);
  });

  it('hookctl with a JWT in HOOKD_TOKEN acts as that user', async () => {
    assertBuilt();
    const list = await hookctl(['list'], { env: cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: carol }) });
    assert.equal(list.code, 0, list.stderr);
    assert.ok(list.stdout.includes(userHook.Id) && list.stdout.includes(docHook.Id), list.stdout);
    const expired = await sign(rsa, { sub: 'carol' }, { exp: Math.floor(Date.now() / 1000) - 3600 });
    const refused = await hookctl(['list'], { env: cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: expired }) });
    assert.equal(refused.code, 4, refused.stderr);
  });

  it('the dry run renders $REQUEST_USER from its User', async () => {
    const r = await api<{ HookId: string; Request: { Body: string } }[]>(
      d.url,
      carol,
      'POST',
      '/_hookd/match',
      {
        Method: 'GET',
        Path: '/repositories/r1',
        User: 'erin',
      },
    );
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.length, 1);
    assert.equal(JSON.parse(r.body[0]!.Request.Body).user, 'erin');
  });
});

describe('$REQUEST_USER of proxied requests', () => {
  it("is the requester's JWT user, the empty string when anonymous or the JWT is bad", async () => {
    receiver.reset();
    const expired = await sign(rsa, { sub: 'mallory' }, { exp: Math.floor(Date.now() / 1000) - 3600 });
    assert.equal((await send(`${d.url}/repositories/r1?as=dave`, { headers: auth(dave) })).status, 200);
    assert.equal((await send(`${d.url}/repositories/r1?as=none`)).status, 200);
    assert.equal((await send(`${d.url}/repositories/r1?as=expired`, { headers: auth(expired) })).status, 200);
    const calls = await receiver.waitFor(3);
    const byAs = new Map(
      calls.map((c) => {
        const doc = JSON.parse(c.body) as { user: string; uri: string };
        return [new URL(doc.uri).searchParams.get('as'), doc.user];
      }),
    );
    assert.deepEqual(Object.fromEntries(byAs), { dave: 'dave', none: '', expired: '' });
    // The JWT reached the upstream untouched: hookd reads identities, it does not consume them.
    assert.ok(upstream.requests.some((r) => r.headers.authorization === `Bearer ${dave}`));
  });

  it('is in the default event document, the delivery Trigger and the tail', async () => {
    receiver.reset();
    const ws = new WebSocket(`${d.url.replace('http', 'ws')}/_hookd/tail`, { headers: auth(carol) });
    const events: { kind: string; HookId: string; Trigger: { User: string | null } }[] = [];
    ws.on('message', (m) => events.push(JSON.parse(String(m))));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    try {
      await send(`${d.url}/docs/a`, { headers: auth(dave) });
      await send(`${d.url}/docs/b`);
      const calls = await receiver.waitFor(2);
      const docs = calls.map((c) => JSON.parse(c.body) as { request: { path: string; user?: string } });
      const a = docs.find((x) => x.request.path === '/docs/a')!;
      const b = docs.find((x) => x.request.path === '/docs/b')!;
      assert.equal(a.request.user, 'dave');
      assert.equal('user' in b.request, false, 'anonymous: no user in the document');

      const list = await api<{ Trigger: { Path: string; User: string | null } }[]>(
        d.url,
        carol,
        'GET',
        `/hooks/${docHook.Id}/deliveries`,
      );
      assert.equal(list.status, 200, list.text);
      const triggers = Object.fromEntries(list.body.map((x) => [x.Trigger.Path, x.Trigger.User]));
      assert.deepEqual(triggers, { '/docs/a': 'dave', '/docs/b': null });

      await until('two fired events', () => events.filter((e) => e.kind === 'fired').length >= 2, 5000).catch(
        () => undefined,
      );
      const fired = events.filter((e) => e.kind === 'fired' && e.HookId === docHook.Id);
      assert.deepEqual(fired.map((e) => e.Trigger.User).sort(), ['dave', null].sort());
    } finally {
      ws.close();
    }
  });

  it('the tail refuses a bad JWT', async () => {
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${d.url.replace('http', 'ws')}/_hookd/tail`, {
        headers: auth(`${carol.slice(0, -3)}abc`),
      });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    assert.equal(status, 401);
  });

  it('POST /report takes a User: the request counts as made by that user', async () => {
    receiver.reset();
    const r = await api<{ fired: number }>(d.url, carol, 'POST', '/_hookd/report', [
      { Method: 'GET', Path: '/repositories/r9?as=report', User: 'erin' },
      { Method: 'GET', Path: '/repositories/r9?as=anon' },
    ]);
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.fired, 2);
    const calls = await receiver.waitFor(2);
    const users = Object.fromEntries(
      calls.map((c) => {
        const doc = JSON.parse(c.body) as { user: string; uri: string };
        return [new URL(doc.uri).searchParams.get('as'), doc.user];
      }),
    );
    assert.deepEqual(users, { report: 'erin', anon: '' });
    const bad = await api<{ errors: { field: string }[] }>(d.url, carol, 'POST', '/_hookd/report', {
      Method: 'GET',
      Path: '/x',
      User: 'not a name',
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(
      bad.body.errors.map((e) => e.field),
      ['User'],
    );
  });
});
