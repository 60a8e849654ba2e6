import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { api, type HookdProcess, spawnHookd } from '../helpers/hookd.js';
import { cleanEnv, hookctl } from '../hookctl/helpers.js';

interface UserBody {
  Name: string;
  Scopes: string[];
  Created: string;
}
interface TokenBody {
  Id: string;
  User: string;
  Label: string;
  Created: string;
  Token?: string;
}
interface ProblemBody {
  detail: string;
  code: string;
  errors?: { field: string; message: string }[];
}

/** `/_hookd/users…` and `hookctl users|tokens` against a running daemon (the real binaries). */
describe('users and tokens through the API and hookctl', { timeout: 120_000 }, () => {
  let d: HookdProcess;
  const ctl = (args: string[], token = d.token) =>
    hookctl(args, { env: cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: token }) });

  before(async () => {
    d = await spawnHookd([], { timeoutMs: 30_000 });
  });
  after(async () => {
    await d?.stop();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('admin is listed with ["/"]', async () => {
    const r = await api<UserBody[]>(d.url, d.token, 'GET', '/_hookd/users');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.body.map((u) => [u.Name, u.Scopes]),
      [['admin', ['/']]],
    );
  });

  it('POST adds a user with ["own"] by default or the scopes given; 409 for a duplicate; 400 names Scopes', async () => {
    const a = await api<UserBody>(d.url, d.token, 'POST', '/_hookd/users', { Name: 'olive' });
    assert.equal(a.status, 201, a.text);
    assert.deepEqual(a.body.Scopes, ['own']);
    assert.equal(a.headers.get('location'), '/_hookd/users/olive');
    const b = await api<UserBody>(d.url, d.token, 'POST', '/_hookd/users', {
      Name: 'rita',
      Scopes: ['/repositories/acme'],
    });
    assert.equal(b.status, 201, b.text);
    assert.deepEqual(b.body.Scopes, ['/repositories/acme']);
    const dup = await api<ProblemBody>(d.url, d.token, 'POST', '/_hookd/users', { Name: 'olive' });
    assert.equal(dup.status, 409);
    const bad = await api<ProblemBody>(d.url, d.token, 'POST', '/_hookd/users', {
      Name: 'x1',
      Scopes: ['/a?b', 'everything'],
    });
    assert.equal(bad.status, 400, bad.text);
    assert.deepEqual(
      bad.body.errors?.map((e) => e.field),
      ['Scopes', 'Scopes'],
    );
    assert.match(bad.body.errors![1]!.message, /"everything" is neither the word "own" nor a path pattern/);
    const badName = await api<ProblemBody>(d.url, d.token, 'POST', '/_hookd/users', { Name: '1 bad' });
    assert.equal(badName.status, 400);
  });

  it('PUT replaces the scopes; the name cannot change; 404 for nobody', async () => {
    const r = await api<UserBody>(d.url, d.token, 'PUT', '/_hookd/users/rita', {
      Name: 'rita',
      Scopes: ['/repositories/acme', '/users/rita'],
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.Scopes, ['/repositories/acme', '/users/rita']);
    const got = await api<UserBody>(d.url, d.token, 'GET', '/_hookd/users/rita');
    assert.deepEqual(got.body.Scopes, ['/repositories/acme', '/users/rita']);
    const rename = await api(d.url, d.token, 'PUT', '/_hookd/users/rita', { Name: 'other', Scopes: [] });
    assert.equal(rename.status, 400);
    const none = await api(d.url, d.token, 'PUT', '/_hookd/users/nobody', { Scopes: ['own'] });
    assert.equal(none.status, 404);
  });

  it('tokens: created with the value shown once, listed without value or hash, revoked', async () => {
    const t = await api<TokenBody>(d.url, d.token, 'POST', '/_hookd/users/rita/tokens', { Label: 'laptop' });
    assert.equal(t.status, 201, t.text);
    assert.match(t.body.Token!, /^hkd_[0-9a-f]{12}_/);
    assert.equal(t.headers.get('cache-control'), 'no-store');
    const rita = t.body.Token!;
    assert.equal((await api(d.url, rita, 'GET', '/hooks')).status, 200);
    const list = await api<TokenBody[]>(d.url, d.token, 'GET', '/_hookd/users/rita/tokens');
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((x) => [x.Id, x.User, x.Label]),
      [[t.body.Id, 'rita', 'laptop']],
    );
    assert.ok(!list.text.includes(rita.slice(17)), 'the secret is not listed');
    assert.ok(!/hash/i.test(list.text), 'no hash leaves the daemon');
    const wrongUser = await api(d.url, d.token, 'DELETE', `/_hookd/users/olive/tokens/${t.body.Id}`);
    assert.equal(wrongUser.status, 404);
    const del = await api(d.url, d.token, 'DELETE', `/_hookd/users/rita/tokens/${t.body.Id}`);
    assert.equal(del.status, 204);
    assert.equal((await api(d.url, rita, 'GET', '/hooks')).status, 401);
  });

  it('non-admins get 403, except reading their own record', async () => {
    const t = await api<TokenBody>(d.url, d.token, 'POST', '/_hookd/users/olive/tokens', {});
    const olive = t.body.Token!;
    for (const [method, path, body] of [
      ['GET', '/_hookd/users', undefined],
      ['POST', '/_hookd/users', { Name: 'mallory', Scopes: ['/'] }],
      ['PUT', '/_hookd/users/olive', { Scopes: ['/'] }],
      ['GET', '/_hookd/users/rita', undefined],
      ['DELETE', '/_hookd/users/rita', undefined],
      ['GET', '/_hookd/users/olive/tokens', undefined],
      ['POST', '/_hookd/users/olive/tokens', {}],
    ] as const) {
      const r = await api<ProblemBody>(d.url, olive, method, path, body);
      assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
    }
    const self = await api<UserBody>(d.url, olive, 'GET', '/_hookd/users/olive');
    assert.equal(self.status, 200);
    assert.deepEqual(self.body.Scopes, ['own']);
    assert.equal((await api(d.url, undefined, 'GET', '/_hookd/users')).status, 401);
  });

  it("creating a hook outside the owner's path scopes is 400 naming PathPattern, the rule and the scopes", async () => {
    const t = await api<TokenBody>(d.url, d.token, 'POST', '/_hookd/users/rita/tokens', {});
    const rita = t.body.Token!;
    const hook = { PathPattern: '/', Methods: ['*'], Callback: 'http://127.0.0.1:9/cb' };
    const r = await api<ProblemBody>(d.url, rita, 'POST', '/hooks', hook);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.errors?.[0]?.field, 'PathPattern');
    assert.match(r.body.detail, /PathPattern/);
    assert.match(r.body.detail, /inside one of the owner's path scopes/);
    assert.match(r.body.detail, /\/repositories\/acme, \/users\/rita/);
    const inside = await api<{ Id: string }>(d.url, rita, 'POST', '/hooks', {
      ...hook,
      PathPattern: '/repositories/acme/(*)',
    });
    assert.equal(inside.status, 201, inside.text);
    // Replace applies the same rule.
    const replaced = await api<ProblemBody>(d.url, rita, 'PUT', `/hooks/${inside.body.Id}`, {
      ...hook,
      PathPattern: '/repositories/*',
    });
    assert.equal(replaced.status, 400, replaced.text);
    // An owner with own may create any pattern (it fires for the owner's own requests).
    const olive = (await api<TokenBody>(d.url, d.token, 'POST', '/_hookd/users/olive/tokens', {})).body
      .Token!;
    assert.equal((await api(d.url, olive, 'POST', '/hooks', hook)).status, 201);
  });

  it('DELETE removes the user with its tokens and hooks; admin cannot be removed', async () => {
    const before = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', {
      Method: 'GET',
      Path: '/repositories/acme/x',
      StatusCode: 200,
    });
    assert.equal(before.body.fired, 1, "rita's hook fires before the removal");
    const r = await api(d.url, d.token, 'DELETE', '/_hookd/users/rita');
    assert.equal(r.status, 204);
    assert.equal((await api(d.url, d.token, 'GET', '/_hookd/users/rita')).status, 404);
    const afterRemoval = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', {
      Method: 'GET',
      Path: '/repositories/acme/x',
      StatusCode: 200,
    });
    assert.equal(afterRemoval.body.fired, 0, "the running daemon dropped rita's hook at once");
    const admin = await api<ProblemBody>(d.url, d.token, 'DELETE', '/_hookd/users/admin');
    assert.equal(admin.status, 409);
  });

  describe('hookctl users and tokens', () => {
    it('users add, list (piped: tab-separated; -o json), grant, revoke', async () => {
      const add = await ctl(['users', 'add', 'carol', '--scope', '/repositories/carol']);
      assert.equal(add.code, 0, add.stderr);
      assert.match(add.stdout, /^carol\t\/repositories\/carol\t\t\S+\n$/);
      assert.match(add.stderr, /hookctl tokens create carol/);
      const list = await ctl(['users', 'list']);
      assert.equal(list.code, 0, list.stderr);
      assert.deepEqual(
        list.stdout
          .trim()
          .split('\n')
          .map((l) => l.split('\t').slice(0, 2)),
        [
          ['admin', '/'],
          ['carol', '/repositories/carol'],
          ['olive', 'own'],
        ],
      );
      const grant = await ctl(['users', 'grant', 'carol', 'own', '/users/carol']);
      assert.equal(grant.code, 0, grant.stderr);
      const json = await ctl(['users', 'list', '-o', 'json']);
      const users = JSON.parse(json.stdout) as UserBody[];
      assert.deepEqual(users.find((u) => u.Name === 'carol')?.Scopes, [
        '/repositories/carol',
        'own',
        '/users/carol',
      ]);
      const revoke = await ctl(['users', 'revoke', 'carol', 'own', '/nope', '-o', 'json']);
      assert.equal(revoke.code, 0, revoke.stderr);
      assert.deepEqual((JSON.parse(revoke.stdout) as UserBody).Scopes, [
        '/repositories/carol',
        '/users/carol',
      ]);
      assert.match(revoke.stderr, /carol has no scope \/nope/);
      // Refused by hookctl, naming the argument (not the server's combined list).
      const bad = await ctl(['users', 'grant', 'carol', 'everything']);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /"everything" is not a scope/);
    });

    it('tokens create prints only the token on stdout; list shows no secret; revoke makes it 401', async () => {
      const created = await ctl(['tokens', 'create', 'carol', '--label', 'ci']);
      assert.equal(created.code, 0, created.stderr);
      const token = created.stdout.trim();
      assert.match(token, /^hkd_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/);
      const id = /^hkd_([0-9a-f]{12})_/.exec(token)![1]!;
      assert.match(created.stderr, new RegExp(`created token ${id} for carol`));
      assert.equal((await api(d.url, token, 'GET', '/hooks')).status, 200);
      const list = await ctl(['tokens', 'list', 'carol']);
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, new RegExp(`^${id}\tcarol\t\\S+\tci$`, 'm'));
      assert.ok(!list.stdout.includes(token.slice(17)));
      const all = await ctl(['tokens', 'list', '-o', 'json']);
      const tokens = JSON.parse(all.stdout) as TokenBody[];
      assert.ok(tokens.some((t) => t.User === 'admin'));
      assert.ok(tokens.some((t) => t.Id === id));
      assert.ok(tokens.every((t) => t.Token === undefined));
      const revoked = await ctl(['tokens', 'revoke', 'carol', id]);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.equal((await api(d.url, token, 'GET', '/hooks')).status, 401);
      const again = await ctl(['tokens', 'revoke', 'carol', id]);
      assert.equal(again.code, 1);
    });

    it('a non-admin gets exit 1 and the reason', async () => {
      const olive = (await api<TokenBody>(d.url, d.token, 'POST', '/_hookd/users/olive/tokens', {})).body
        .Token!;
      const r = await ctl(['users', 'list'], olive);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /only the admin user manages users and tokens/);
    });

    it('users remove', async () => {
      const r = await ctl(['users', 'remove', 'carol', 'ghost']);
      assert.equal(r.code, 1, 'one of them did not exist');
      assert.match(r.stderr, /removed user carol/);
      assert.match(r.stderr, /no user "ghost"/);
      assert.equal((await api(d.url, d.token, 'GET', '/_hookd/users/carol')).status, 404);
    });
  });
});
