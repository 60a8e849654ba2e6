import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { MockAgent } from 'undici';
import { type Delivery, type Hook, HookdClient, type TailEvent } from '../../src/client/index.js';
import { verifyCallback } from '../../src/verify/index.js';
import { startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { closedPort, type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { failure } from './failure.js';

// hookd/client against a real hookd: every method, the typed errors, pages, the tail.

let d: TestDaemon;
let receiver: Receiver;
let client: HookdClient;

const hook = (path: string, extra: Record<string, unknown> = {}) => ({
  PathPattern: path,
  Methods: ['POST'],
  Callback: `${receiver.url}/cb`,
  ...extra,
});

before(async () => {
  d = await startHookd();
  receiver = await startReceiver();
  client = new HookdClient({ baseUrl: d.url, token: d.token });
});

after(async () => {
  await client.close();
  await receiver.close();
  await d.close();
});

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('hookd/client: hooks', () => {
  it('create, get, getVersioned, replace with If-Match, validate, enable, delete', async () => {
    const created = await client.hooks.create(hook('/client/one/(*)', { Name: 'client-one' }));
    assert.match(created.Id, /^hk_/);
    assert.equal(created.Owner, 'admin');
    assert.equal(created.State, 'active');
    const byName = await client.hooks.get('client-one');
    assert.equal(byName.Id, created.Id);
    const { hook: h, etag } = await client.hooks.getVersioned(created.Id);
    assert.ok(etag, 'an ETag');
    const replaced = await client.hooks.replace(
      h.Id,
      { ...hook('/client/one/(*)'), Methods: ['PUT'] },
      { ifMatch: etag },
    );
    assert.deepEqual(replaced.Methods, ['PUT']);
    const stale = await failure(client.hooks.replace(h.Id, hook('/client/one/(*)'), { ifMatch: etag }));
    assert.equal(stale.status, 412);
    assert.equal(stale.code, 'PRECONDITION_FAILED');
    const checked = await client.hooks.validate(hook('/client/two'));
    assert.equal(checked.PathPattern, '/client/two');
    const enabled = await client.hooks.enable(h.Id);
    assert.equal(enabled.State, 'active');
    await client.hooks.delete(h.Id);
    const gone = await failure(client.hooks.get(h.Id));
    assert.deepEqual([gone.status, gone.code, gone.request], [404, 'NOT_FOUND', `GET /hooks/${h.Id}`]);
  });

  it('a bad hook is a HookdError with status, code, problem and the invalid fields', async () => {
    const e = await failure(
      client.hooks.create({
        PathPattern: 'no-slash',
        Methods: ['POST'],
        Callback: 'ftp://x',
        Nmae: 'x',
      } as never),
    );
    assert.equal(e.status, 400);
    assert.equal(e.code, 'VALIDATION_FAILED');
    assert.equal(e.problem.status, 400);
    assert.equal(e.problem.type, 'urn:hookd:problem:validation-failed');
    assert.ok(e.fields.includes('Callback'), e.fields.join());
    assert.ok(e.fields.includes('Nmae'), e.fields.join());
    assert.deepEqual(
      e.fields,
      (e.problem.errors ?? []).map((x) => x.field),
    );
  });

  it('hookTypes and match', async () => {
    const types = await client.hookTypes();
    assert.deepEqual(
      types.map((t) => [t.Type, t.Name]),
      [
        [0, 'BeforeCompletion'],
        [1, 'AfterCompletion'],
      ],
    );
    const h = await client.hooks.create(hook('/client/match/(*)', { CallbackContent: '$1' }));
    const m = await client.hooks.match({ Method: 'POST', Path: '/client/match/x1', StatusCode: 200 });
    const entry = m.find((x) => x.HookId === h.Id);
    assert.ok(entry);
    assert.deepEqual(entry.Captures, ['x1']);
    assert.equal(entry.Request.Body, 'x1');
    await client.hooks.delete(h.Id);
  });

  it('a wrong token is 401 UNAUTHORIZED; a token function is asked each time', async () => {
    const bad = new HookdClient({ baseUrl: d.url, token: 'hkd_000000000000_wrong' });
    const e = await failure(bad.hookTypes());
    assert.equal(e.status, 401);
    await bad.close();
    let asked = 0;
    const fn = new HookdClient({
      baseUrl: d.url,
      token: async () => {
        asked++;
        return d.token;
      },
    });
    await fn.hookTypes();
    await fn.hookTypes();
    assert.equal(asked, 2);
    await fn.close();
  });

  it('nothing listening is status 0 UNREACHABLE; a slow answer is TIMEOUT', async () => {
    const port = await closedPort();
    const none = new HookdClient({ baseUrl: `http://127.0.0.1:${port}`, token: 't' });
    const e = await failure(none.hookTypes());
    assert.deepEqual([e.status, e.code], [0, 'UNREACHABLE']);
    const slow = await startReceiver({ reply: () => 'hang' });
    const late = new HookdClient({ baseUrl: slow.url, token: 't', timeoutMs: 300 });
    const t = await failure(late.hookTypes());
    assert.deepEqual([t.status, t.code], [0, 'TIMEOUT']);
    await Promise.all([none.close(), late.close(), slow.close()]);
  });
});

describe('hookd/client: pages', () => {
  it('lists 2,500 hooks page by page, each once, in Id order', async () => {
    const before = new Set<string>();
    for await (const h of client.hooks.list()) before.add(h.Id);
    const made: string[] = [];
    for (let i = 0; i < 2500; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, (_v, j) => client.hooks.create(hook(`/client/pages/${i + j}`))),
      );
      made.push(...batch.map((h) => h.Id));
    }
    const listed = (await collect(client.hooks.list())).map((h) => h.Id).filter((id) => !before.has(id));
    assert.equal(listed.length, 2500);
    assert.deepEqual(listed, [...made].sort());
    // Smaller pages: 26 requests, the same hooks.
    let n = 0;
    for await (const h of client.hooks.list({ pageSize: 100 })) if (!before.has(h.Id)) n++;
    assert.equal(n, 2500);
    // Leaving early stops fetching.
    let seen = 0;
    for await (const _h of client.hooks.list({ pageSize: 10 })) if (++seen === 3) break;
    assert.equal(seen, 3);
    for (let i = 0; i < made.length; i += 50) {
      await Promise.all(made.slice(i, i + 50).map((id) => client.hooks.delete(id)));
    }
  });
});

describe('hookd/client: report, deliveries, secrets', () => {
  it('report (one and a batch, with an Idempotency-Key), deliveries list/get/redeliver, bulk redelivery', async () => {
    const h = await client.hooks.create(hook('/client/report/(*)', { Type: 1, CallbackContent: '$1' }));
    const one = await client.report({ Method: 'POST', Path: '/client/report/a', StatusCode: 201 });
    assert.deepEqual(one, { accepted: 1, fired: 1, replayed: false });
    const batch = [
      { Method: 'POST', Path: '/client/report/b', StatusCode: 201 },
      { Method: 'POST', Path: '/client/report/c', StatusCode: 201 },
    ];
    const first = await client.report(batch, { idempotencyKey: 'client-batch-1' });
    assert.deepEqual(first, { accepted: 2, fired: 2, replayed: false });
    const again = await client.report(batch, { idempotencyKey: 'client-batch-1' });
    assert.deepEqual(again, { accepted: 2, fired: 2, replayed: true });
    const reused = await failure(client.report(batch.slice(0, 1), { idempotencyKey: 'client-batch-1' }));
    assert.deepEqual([reused.status, reused.code], [422, 'IDEMPOTENCY_KEY_REUSED']);

    await receiver.waitFor(3);
    const all = await until('three deliveries succeeded', async () => {
      const list = await collect(client.deliveries.list({ hook: h.Id, status: 'succeeded' }));
      return list.length === 3 ? list : undefined;
    });
    assert.deepEqual(all.map((x: Delivery) => x.Request.Body).sort(), ['a', 'b', 'c']);
    const paged = await collect(client.deliveries.list({ hook: h.Id, pageSize: 1 }));
    assert.deepEqual(
      paged.map((x) => x.Id),
      all.map((x) => x.Id),
    );
    const none = await collect(
      client.deliveries.list({ hook: h.Id, since: new Date(Date.now() + 3600_000).toISOString() }),
    );
    assert.equal(none.length, 0);
    const hour = (n: number) => new Date(Date.now() + n * 3600_000).toISOString();
    assert.equal((await collect(client.deliveries.list({ hook: h.Id, until: hour(-1) }))).length, 0);
    const within = await collect(client.deliveries.list({ hook: h.Id, since: hour(-1), until: hour(1) }));
    assert.equal(within.length, 3);
    const detail = await client.deliveries.get(all[0]!.Id);
    assert.equal(detail.AttemptLog[0]?.StatusCode, 200);
    const queued = await client.deliveries.redeliver(all[0]!.Id);
    assert.equal(queued.Id, all[0]!.Id);
    const dry = await client.deliveries.redeliverAll(h.Id, { status: 'succeeded', dryRun: true });
    assert.equal(dry.dryRun, true);
    assert.equal(dry.failed, 0, 'a bulk redelivery counts the ones whose Transform failed again');
    const bad = await failure(client.deliveries.get('dl_nope'));
    assert.equal(bad.status, 404);

    const secret = await client.secrets.get(h.Id);
    assert.match(secret.Secret, /^whsec_/);
    assert.match(secret.PublicKey, /^whpk_/);
    const call = receiver.calls.at(-1)!;
    assert.deepEqual(
      verifyCallback({ body: call.body, headers: call.headers, secret: secret.Secret }).ok,
      true,
    );
    const rotated = await client.secrets.rotate(h.Id);
    assert.notEqual(rotated.Secret, secret.Secret);
    assert.ok(rotated.PreviousValidUntil);
    await client.hooks.delete(h.Id);
  });
});

describe('hookd/client: users, tokens, portal links, notifications, reload', () => {
  it('admin calls', async () => {
    const u = await client.users.add({ Name: 'client-user', Scopes: ['own'] });
    assert.equal(u.Name, 'client-user');
    assert.ok((await client.users.list()).some((x) => x.Name === 'client-user'));
    assert.deepEqual(
      (await client.users.replace('client-user', { Name: 'client-user', Scopes: ['/client'] })).Scopes,
      ['/client'],
    );
    assert.deepEqual((await client.users.get('client-user')).Scopes, ['/client']);
    const t = await client.users.tokens.create('client-user', { Label: 'ci' });
    assert.match(t.Token ?? '', /^hkd_/);
    assert.deepEqual(
      (await client.users.tokens.list('client-user')).map((x) => x.Label),
      ['ci'],
    );
    const as = new HookdClient({ baseUrl: d.url, token: t.Token });
    const denied = await failure(as.users.list());
    assert.deepEqual([denied.status, denied.code], [403, 'FORBIDDEN']);
    await as.close();
    await client.users.tokens.revoke('client-user', t.Id);
    assert.deepEqual(await client.users.tokens.list('client-user'), []);

    const link = await client.portalLinks.create({ User: 'client-user', Ttl: '5m' });
    assert.match(link.Url, /\/portal\/open\//);
    assert.equal(link.User, 'client-user');
    const noUser = await failure(client.portalLinks.create({ User: 'nobody-here' }));
    assert.equal(noUser.status, 404);

    const ep = await client.notifications.create({
      Url: `${receiver.url}/notify`,
      Events: ['hook.disabled'],
    });
    assert.match(ep.Secret, /^whsec_/);
    assert.deepEqual((await client.notifications.get(ep.Id)).Events, ['hook.disabled']);
    assert.ok((await client.notifications.list()).some((x) => x.Id === ep.Id));
    assert.deepEqual(await client.notifications.deliveries(ep.Id), []);
    await client.notifications.delete(ep.Id);

    await client.users.remove('client-user');
    assert.equal((await failure(client.users.get('client-user'))).status, 404);
    const r = await client.reload();
    assert.ok(Array.isArray(r.applied) && Array.isArray(r.restartRequired));
    const doc = await client.openApi();
    assert.equal(doc.openapi, '3.1.0');
  });
});

describe("hookd/client: a caller's dispatcher", () => {
  it('goes through a MockAgent: the requests it makes, the answers it reads', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    const pool = agent.get('http://hookd.test');
    const seen: { path: string; auth: unknown; body: unknown }[] = [];
    pool.intercept({ path: '/api/hooks?limit=1000', method: 'GET' }).reply(
      200,
      (o) => {
        seen.push({ path: o.path, auth: (o.headers as Record<string, string>).authorization, body: o.body });
        return [{ Id: 'hk_a' }];
      },
      {
        headers: {
          'content-type': 'application/json',
          link: '</api/hooks?limit=1000&after=hk_a>; rel="next"',
        },
      },
    );
    pool
      .intercept({ path: '/api/hooks?limit=1000&after=hk_a', method: 'GET' })
      .reply(200, [{ Id: 'hk_b' }], { headers: { 'content-type': 'application/json' } });
    pool.intercept({ path: '/api/_hookd/report', method: 'POST' }).reply(
      200,
      (o) => {
        seen.push({
          path: o.path,
          auth: (o.headers as Record<string, string>)['idempotency-key'],
          body: o.body,
        });
        return { accepted: 1, fired: 0 };
      },
      { headers: { 'content-type': 'application/json' } },
    );
    const mocked = new HookdClient({ baseUrl: 'http://hookd.test/api/', token: 'hkd_x', dispatcher: agent });
    assert.deepEqual(
      (await collect(mocked.hooks.list())).map((h: Hook) => h.Id),
      ['hk_a', 'hk_b'],
    );
    await mocked.report({ Method: 'GET', Path: '/x' }, { idempotencyKey: 'k1' });
    assert.deepEqual(seen, [
      { path: '/api/hooks?limit=1000', auth: 'Bearer hkd_x', body: undefined },
      { path: '/api/_hookd/report', auth: 'k1', body: '{"Method":"GET","Path":"/x"}' },
    ]);
    agent.assertNoPendingInterceptors();
    await agent.close();
  });

  it('retries an idempotent call on 503 STORE_UNAVAILABLE within its bound, never a create', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    const pool = agent.get('http://hookd.test');
    const unavailable = {
      type: 'urn:hookd:problem:store-unavailable',
      title: 'Store unavailable',
      status: 503,
      detail: 'the store refuses writes',
      code: 'STORE_UNAVAILABLE',
    };
    const problemHeaders = { 'content-type': 'application/problem+json', 'retry-after': '0' };
    pool
      .intercept({ path: '/hooks/h1', method: 'DELETE' })
      .reply(503, unavailable, { headers: problemHeaders })
      .times(2);
    pool.intercept({ path: '/hooks/h1', method: 'DELETE' }).reply(204, '');
    pool.intercept({ path: '/hooks', method: 'POST' }).reply(503, unavailable, { headers: problemHeaders });
    const c = new HookdClient({
      baseUrl: 'http://hookd.test',
      token: 't',
      dispatcher: agent,
      retryUnavailableMs: 5000,
    });
    await c.hooks.delete('h1');
    const e = await failure(c.hooks.create(hook('/x')));
    assert.deepEqual([e.status, e.code, e.retryAfterSeconds], [503, 'STORE_UNAVAILABLE', 0]);
    agent.assertNoPendingInterceptors();
    pool
      .intercept({ path: '/hooks/h2', method: 'DELETE' })
      .reply(503, unavailable, { headers: problemHeaders })
      .persist();
    const never = new HookdClient({
      baseUrl: 'http://hookd.test',
      token: 't',
      dispatcher: agent,
      retryUnavailableMs: 0,
    });
    assert.equal((await failure(never.hooks.delete('h2'))).code, 'STORE_UNAVAILABLE');
    await agent.close();
  });
});

describe('hookd/client: tail', () => {
  it('yields fired callbacks and attempts, and reconnects across a daemon restart', async () => {
    const dataDir = tempDir();
    const port = await closedPort();
    const start = () => startHookd({ listen: { host: '127.0.0.1', port } }, { dataDir });
    let own = await start();
    const c = new HookdClient({ baseUrl: own.url, token: own.token });
    const h = await c.hooks.create({ ...hook('/client/tail/(*)', { Type: 1 }), Persist: true });
    const ac = new AbortController();
    const events: TailEvent[] = [];
    let connects = 0;
    let drops = 0;
    const reading = (async () => {
      for await (const e of c.tail({
        hooks: [h.Id],
        signal: ac.signal,
        onConnect: () => connects++,
        onDrop: () => drops++,
      })) {
        events.push(e);
      }
    })();
    try {
      await until('connected', () => connects === 1);
      await c.report({ Method: 'POST', Path: '/client/tail/1', StatusCode: 200 });
      await until('fired and attempted', () => events.some((e) => e.kind === 'attempt'));
      await own.close();
      await until('the drop seen', () => drops === 1);
      own = await start();
      await until('reconnected', () => connects === 2, { ms: 15_000 });
      await c.report({ Method: 'POST', Path: '/client/tail/2', StatusCode: 200 });
      await until('the second one', () =>
        events.some(
          (e) => e.kind === 'fired' && e.Trigger.Kind === 'request' && e.Trigger.Path === '/client/tail/2',
        ),
      );
      const fired = events.filter((e) => e.kind === 'fired');
      assert.deepEqual(
        fired.map((e) =>
          e.kind === 'fired' && e.Trigger.Kind === 'request' ? [e.HookId, e.Trigger.Path] : [],
        ),
        [
          [h.Id, '/client/tail/1'],
          [h.Id, '/client/tail/2'],
        ],
      );
    } finally {
      ac.abort();
      await reading;
      await c.close();
      await own.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a refused token ends the iteration with a HookdError', async () => {
    const bad = new HookdClient({ baseUrl: d.url, token: 'hkd_000000000000_wrong' });
    const e = await failure(collect(bad.tail()));
    assert.equal(e.status, 401);
  });
});
