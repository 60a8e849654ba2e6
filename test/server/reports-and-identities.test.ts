import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import {
  addUser,
  createHook,
  type Receiver,
  send,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';
import { cleanEnv, hookctl } from '../hookctl/helpers.js';

// Reports and identities, against a real daemon over real HTTP: a report is made by its caller
// unless the admin granted `report`; Idempotency-Key is read from the raw headers; a refused
// callback host name is no DNS oracle; provider names that are no hookd user name are anonymous.

interface Problem {
  code: string;
  detail: string;
  errors?: { field: string; message: string }[];
}
interface UserBody {
  Name: string;
  Scopes: string[];
  Permissions: string[];
}

describe('reports are made by their caller', { timeout: 60_000 }, () => {
  let d: TestDaemon;
  let receiver: Receiver;
  const tokens: Record<string, string> = {};
  const report = (token: string, body: unknown, path = '/_hookd/report') =>
    api<{ accepted: number; fired: number } & Problem>(d.url, token, 'POST', path, body);

  before(async () => {
    d = await startHookd();
    receiver = await startReceiver();
    // As in the issue: alice and bob own-scoped, carol watching /payroll by path.
    tokens.alice = await addUser(d, 'alice', ['own']);
    tokens.bob = await addUser(d, 'bob', ['own']);
    tokens.carol = await addUser(d, 'carol', ['/payroll']);
    tokens.svc = await addUser(d, 'svc', ['own']);
    for (const who of ['alice', 'carol', 'bob'])
      await createHook(
        d,
        {
          PathPattern: '/payroll/(*)',
          Methods: ['*'],
          Callback: `${receiver.url}/${who}`,
          CallbackContent: 'user=$REQUEST_USER',
        },
        { token: tokens[who]! },
      );
  });
  after(async () => {
    await d?.close();
    await receiver?.close();
  });

  const forged = { Method: 'POST', Path: '/payroll/approve/42', StatusCode: 200, User: 'alice' };

  it("refuses bob's report in alice's name: 403 FORBIDDEN naming User", async () => {
    const res = await report(tokens.bob!, forged);
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.code, 'FORBIDDEN');
    assert.deepEqual(
      res.body.errors?.map((e) => e.field),
      ['User'],
    );
    assert.match(res.body.detail, /report permission/);
    // In a batch the item is named.
    const batch = await report(tokens.bob!, [{ Method: 'GET', Path: '/payroll/x' }, forged]);
    assert.equal(batch.status, 403);
    assert.deepEqual(
      batch.body.errors?.map((e) => e.field),
      ['[1].User'],
    );
  });

  it("refuses bob's dry run in alice's name too", async () => {
    const res = await report(tokens.bob!, forged, '/_hookd/match');
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.code, 'FORBIDDEN');
  });

  it("fires only bob's own hooks for bob's report, never carol's or alice's", async () => {
    // Anonymous: carol's path-scoped hook would fire for a proxied request; for bob's report it does not.
    const anonymous = await report(tokens.bob!, {
      Method: 'POST',
      Path: '/payroll/approve/42',
      StatusCode: 200,
    });
    assert.equal(anonymous.status, 202, anonymous.text);
    assert.deepEqual(anonymous.body, { accepted: 1, fired: 0 });
    // Made by bob: bob's own-scoped hook fires, nobody else's.
    receiver.reset();
    const own = await report(tokens.bob!, { ...forged, User: 'bob' });
    assert.deepEqual(own.body, { accepted: 1, fired: 1 });
    const [call] = await receiver.waitFor(1);
    assert.equal(call!.url, '/bob');
    assert.equal(call!.body, 'user=bob');
  });

  it('fires every matching hook for a user the admin granted report, shown in /_hookd/users', async () => {
    const refused = await report(tokens.svc!, forged);
    assert.equal(refused.status, 403, 'not before the grant');
    const granted = await api<UserBody>(d.url, d.token, 'PUT', '/_hookd/users/svc', {
      Scopes: ['own'],
      Permissions: ['report'],
    });
    assert.equal(granted.status, 200, granted.text);
    assert.deepEqual(granted.body.Permissions, ['report']);
    const list = await api<UserBody[]>(d.url, d.token, 'GET', '/_hookd/users');
    assert.deepEqual(Object.fromEntries(list.body.map((u) => [u.Name, u.Permissions])), {
      admin: ['report', 'portal'],
      alice: [],
      bob: [],
      carol: [],
      svc: ['report'],
    });
    receiver.reset();
    const res = await report(tokens.svc!, forged);
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(res.body, { accepted: 1, fired: 2 }, "alice's (made by alice) and carol's (by path)");
    const calls = await receiver.waitFor(2);
    assert.deepEqual(calls.map((c) => `${c.url} ${c.body}`).sort(), [
      '/alice user=alice',
      '/carol user=alice',
    ]);
    // Leaving Permissions out of a PUT keeps them; an empty list revokes at once.
    const kept = await api<UserBody>(d.url, d.token, 'PUT', '/_hookd/users/svc', { Scopes: ['own'] });
    assert.deepEqual(kept.body.Permissions, ['report']);
    await api(d.url, d.token, 'PUT', '/_hookd/users/svc', { Scopes: ['own'], Permissions: [] });
    assert.equal((await report(tokens.svc!, forged)).status, 403, 'revoked: refused again');
  });

  it('refuses unknown permissions (400 naming Permissions) and changes to the admin (409)', async () => {
    const bad = await api<Problem>(d.url, d.token, 'PUT', '/_hookd/users/svc', {
      Scopes: ['/elsewhere'],
      Permissions: ['everything'],
    });
    assert.equal(bad.status, 400, bad.text);
    assert.deepEqual(
      bad.body.errors?.map((e) => e.field),
      ['Permissions'],
    );
    const unchanged = await api<UserBody>(d.url, d.token, 'GET', '/_hookd/users/svc');
    assert.deepEqual(unchanged.body.Scopes, ['own'], 'nothing written when a field is refused');
    const admin = await api<Problem>(d.url, d.token, 'PUT', '/_hookd/users/admin', {
      Scopes: ['/'],
      Permissions: [],
    });
    assert.equal(admin.status, 409, admin.text);
    const added = await api<UserBody>(d.url, d.token, 'POST', '/_hookd/users', {
      Name: 'reporter',
      Permissions: ['report'],
    });
    assert.equal(added.status, 201, added.text);
    assert.deepEqual(added.body.Permissions, ['report']);
  });

  it('hookctl users grant/revoke --permission report, and users list shows it', async () => {
    const ctl = (args: string[]) =>
      hookctl(args, { env: cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token }) });
    const grant = await ctl(['users', 'grant', 'bob', '--permission', 'report', '-o', 'json']);
    assert.equal(grant.code, 0, grant.stderr);
    assert.deepEqual((JSON.parse(grant.stdout) as UserBody).Permissions, ['report']);
    assert.deepEqual((JSON.parse(grant.stdout) as UserBody).Scopes, ['own'], 'scopes kept');
    const list = await ctl(['users', 'list']);
    assert.match(list.stdout, /^bob\town\treport\t\S+$/m);
    assert.match(list.stdout, /^alice\town\t\t\S+$/m);
    assert.equal((await report(tokens.bob!, forged)).status, 202, 'bob may now report for alice');
    const revoke = await ctl(['users', 'revoke', 'bob', '--permission', 'report']);
    assert.equal(revoke.code, 0, revoke.stderr);
    assert.equal((await report(tokens.bob!, forged)).status, 403);
    const none = await ctl(['users', 'grant', 'bob']);
    assert.equal(none.code, 2, 'nothing to grant is a usage error');
  });
});

describe('a duplicated Idempotency-Key', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startHookd();
  });
  after(async () => d?.close());

  it('is refused with 400 naming the header, not read as "k1, k2"', async () => {
    const res = await send(`${d.url}/_hookd/report`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${d.token}`,
        'content-type': 'application/json',
        'Idempotency-Key': ['k1', 'k2'],
      },
      body: JSON.stringify({ Method: 'GET', Path: '/x' }),
    });
    assert.equal(res.status, 400, res.body);
    const problem = JSON.parse(res.body) as Problem;
    assert.deepEqual(
      problem.errors?.map((e) => e.field),
      ['Idempotency-Key'],
    );
    // One key with a comma in it is still one key.
    const one = await send(`${d.url}/_hookd/report`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${d.token}`,
        'content-type': 'application/json',
        'Idempotency-Key': 'k1, k2',
      },
      body: JSON.stringify({ Method: 'GET', Path: '/x' }),
    });
    assert.equal(one.status, 202, one.body);
  });
});

describe('a refused callback host name is no DNS oracle', () => {
  let d: TestDaemon;
  let bob = '';
  before(async () => {
    d = await startHookd({ allowCallbackNets: [] });
    bob = await addUser(d, 'bob', ['/']);
  });
  after(async () => d?.close());

  const hook = { PathPattern: '/x', Callback: 'http://localhost:9/in' };

  it('tells a user the rule, not the address', async () => {
    const res = await api<Problem>(d.url, bob, 'POST', '/hooks', hook);
    assert.equal(res.status, 400, res.text);
    const callback = res.body.errors?.find((e) => e.field === 'Callback');
    assert.ok(callback, res.text);
    assert.match(callback.message, /--allow-callback-net/);
    assert.doesNotMatch(res.text, /127\.0\.0\.1|::1|loopback/);
    const endpoint = await api<Problem>(d.url, bob, 'POST', '/_hookd/notifications', {
      Url: 'http://localhost:9/n',
      Events: ['delivery.failed'],
    });
    assert.equal(endpoint.status, 400, endpoint.text);
    assert.doesNotMatch(endpoint.text, /127\.0\.0\.1|::1|loopback/);
  });

  it('tells the admin what the name resolved to', async () => {
    const res = await api<Problem>(d.url, d.token, 'POST', '/hooks', hook);
    assert.equal(res.status, 400, res.text);
    assert.match(res.text, /localhost resolves to (127\.0\.0\.1|::1), which is loopback/);
  });
});

describe('proxied identities follow the user-name rules', () => {
  let d: TestDaemon;
  let upstream: Upstream;
  let receiver: Receiver;
  before(async () => {
    upstream = await startUpstream();
    receiver = await startReceiver();
    d = await startHookd({
      upstream: upstream.url,
      identityHeader: 'X-Forwarded-User',
      trustedProxies: ['127.0.0.1'],
    });
    await createHook(d, {
      PathPattern: '/id/(*)',
      Methods: ['GET'],
      Callback: `${receiver.url}/in`,
      CallbackContent: '$1 user=$REQUEST_USER',
    });
  });
  after(async () => {
    await d?.close();
    await upstream?.close();
    await receiver?.close();
  });

  it('makes a request anonymous for hooks when the name is not a hookd user name or is admin, and counts it', async () => {
    const names = ['admin', '../x', '<b>x</b>', `a${'b'.repeat(80)}`, 'alice'];
    for (const [i, name] of names.entries())
      assert.equal((await send(`${d.url}/id/${i}`, { headers: { 'X-Forwarded-User': name } })).status, 200);
    const calls = await receiver.waitFor(names.length);
    assert.deepEqual(calls.map((c) => c.body).sort(), [
      '0 user=',
      '1 user=',
      '2 user=',
      '3 user=',
      '4 user=alice',
    ]);
    const metrics = await (await fetch(`${d.opsUrl}/metrics`)).text();
    assert.match(metrics, /^hookd_identity_names_refused_total 4$/m);
  });

  it('the API keeps refusing such a caller', async () => {
    const res = await api<Problem>(d.url, undefined, 'GET', '/hooks', undefined, {
      'X-Forwarded-User': 'admin',
    });
    assert.notEqual(res.status, 200);
  });
});
