import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { MockAgent, type MockPool } from 'undici';
import { cleanEnv, runInProcess } from './helpers.js';

// hookctl's commands through their run seam with the API client pointed at an undici MockAgent:
// the requests a command makes, and what it prints and exits with for the answers given, without
// a daemon or a process per case.

const SERVER = 'http://hookd.test';
const JSON_TYPE = { 'content-type': 'application/json' };
const PROBLEM_TYPE = { 'content-type': 'application/problem+json' };

const HOOK = {
  Id: 'hk_01JD7W6R0V1X2Y3Z4A5B6C7D8E',
  Name: 'orders',
  Owner: 'admin',
  PathPattern: '/orders/(*)',
  Methods: ['POST'],
  Type: 1,
  StatusCodeBlackList: [],
  StatusCodeWhiteList: [],
  Callback: 'https://receiver.example/orders/$1',
  CallbackMethod: 'POST',
  CallbackContentMediaType: 'application/json',
  Headers: {},
  Persist: true,
  Modified: '2026-11-22T12:00:00.000+00:00',
  State: 'active',
};

let agent: MockAgent;
let pool: MockPool;
let seen: { method: string; path: string; auth: string | undefined; body: string | undefined }[];

beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  pool = agent.get(SERVER);
  seen = [];
});
afterEach(async () => {
  agent.assertNoPendingInterceptors();
  await agent.close();
});

/** Answers `method path` once with `status` and `body`, recording the request. */
function answer(
  method: string,
  path: string,
  status: number,
  body: unknown,
  headers: Record<string, string> = JSON_TYPE,
) {
  pool.intercept({ path, method }).reply(
    status,
    (o) => {
      const h = o.headers as Record<string, string>;
      seen.push({
        method,
        path: o.path,
        auth: h.authorization,
        body: typeof o.body === 'string' ? o.body : undefined,
      });
      return body;
    },
    { headers },
  );
}

const env = () => cleanEnv({ HOOKD_URL: SERVER, HOOKD_TOKEN: 'hkd_mock' });
const hookctl = (args: string[], tty = false) => runInProcess(args, { env: env(), tty, dispatcher: agent });

describe('hookctl against a MockAgent', () => {
  it('list: GET /hooks with the token, following the next page; one tab-separated row each', async () => {
    answer('GET', '/hooks?limit=1000', 200, [HOOK], {
      ...JSON_TYPE,
      link: '</hooks?limit=1000&after=hk_a>; rel="next"',
    });
    answer('GET', '/hooks?limit=1000&after=hk_a', 200, [{ ...HOOK, Id: 'hk_b', Name: undefined }]);
    const r = await hookctl(['list']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      seen.map((s) => [s.method, s.path, s.auth]),
      [
        ['GET', '/hooks?limit=1000', 'Bearer hkd_mock'],
        ['GET', '/hooks?limit=1000&after=hk_a', 'Bearer hkd_mock'],
      ],
    );
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    assert.deepEqual(
      rows.map((c) => c.slice(0, 4)),
      [
        [HOOK.Id, 'orders', 'AfterCompletion', 'POST'],
        ['hk_b', '', 'AfterCompletion', 'POST'],
      ],
    );
  });

  it('get -o json prints the hook as answered', async () => {
    answer('GET', '/hooks/orders', 200, HOOK, { ...JSON_TYPE, etag: '"1"' });
    const r = await hookctl(['get', 'orders', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), HOOK);
  });

  it('a problem answer is exit 1 with its detail, field errors and hint', async () => {
    answer(
      'GET',
      '/hooks/nope',
      404,
      {
        type: 'urn:hookd:problem:not-found',
        title: 'Not found',
        status: 404,
        detail: 'no hook "nope"',
        code: 'NOT_FOUND',
      },
      PROBLEM_TYPE,
    );
    const r = await hookctl(['get', 'nope']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: no hook "nope"/m);
    assert.match(r.stderr, /hint: list your hooks with: hookctl list/);
  });

  it('a 401 is exit 4 naming where the token came from', async () => {
    answer(
      'GET',
      '/hooktypes',
      401,
      {
        type: 'urn:hookd:problem:unauthorized',
        title: 'Unauthorized',
        status: 401,
        detail: 'the bearer token is not valid',
        code: 'UNAUTHORIZED',
      },
      PROBLEM_TYPE,
    );
    const r = await hookctl(['types']);
    assert.equal(r.code, 4);
    assert.match(r.stderr, /the bearer token is not valid \(token from HOOKD_TOKEN\)/);
  });

  it('a 503 STORE_UNAVAILABLE is not retried by hookctl: exit 1 at once with the detail', async () => {
    answer(
      'DELETE',
      `/hooks/${HOOK.Id}`,
      503,
      {
        type: 'urn:hookd:problem:store-unavailable',
        title: 'Store unavailable',
        status: 503,
        detail: 'the store refuses writes: database down',
        code: 'STORE_UNAVAILABLE',
      },
      { ...PROBLEM_TYPE, 'retry-after': '5' },
    );
    const r = await hookctl(['delete', HOOK.Id]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /database down/);
    assert.equal(seen.length, 1);
  });

  it('an HTML page from a proxy is exit 1 saying it is not hookd', async () => {
    answer('GET', '/hooktypes', 502, '<html><h1>Bad gateway</h1></html>', { 'content-type': 'text/html' });
    const r = await hookctl(['types']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /HTML page \("Bad gateway"\), not hookd's API/);
  });

  it('deliveries: the filter goes in the query; rows as the log answers them', async () => {
    const delivery = {
      Id: 'dl_1',
      HookId: HOOK.Id,
      Status: 'failed',
      Attempts: 3,
      Created: '2026-11-22T12:00:00.000+00:00',
      NextAttempt: null,
      LastStatusCode: 503,
      LastError: 'HTTP 503',
      Trigger: { Method: 'POST', Path: '/orders/o1', StatusCode: 201, User: 'alice' },
      Request: { Method: 'POST', Url: 'https://receiver.example/orders/o1', ContentType: null, Body: null },
    };
    pool
      .intercept({
        path: (p) => p.startsWith('/hooks/orders/deliveries?'),
        method: 'GET',
      })
      .reply(
        200,
        (o) => {
          seen.push({ method: 'GET', path: o.path, auth: undefined, body: undefined });
          return [delivery];
        },
        { headers: JSON_TYPE },
      );
    const r = await hookctl(['deliveries', 'orders', '--status', 'failed', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const list = seen.find((s) => s.path.includes('/deliveries?'))!;
    const q = new URL(list.path, SERVER).searchParams;
    assert.equal(q.get('status'), 'failed');
    assert.deepEqual(
      (JSON.parse(r.stdout) as { Id: string }[]).map((d) => d.Id),
      ['dl_1'],
    );
  });

  it('redeliver with a filter posts it and prints the count', async () => {
    answer('POST', '/hooks/orders/redeliver', 202, { queued: 4, pending: 1, failed: 0 });
    const r = await hookctl(['redeliver', '--hook', 'orders', '--status', 'failed']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(seen[0]!.body!), { status: 'failed' });
    assert.match(r.stdout + r.stderr, /4/);
  });

  it('redeliver says how many failed again in the Transform and were not queued', async () => {
    answer('POST', '/hooks/orders/redeliver', 202, { queued: 3, pending: 0, failed: 2 });
    const r = await hookctl(['redeliver', '--hook', 'orders', '--status', 'failed']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout + r.stderr,
      /queued 3 deliveries of orders again: 2 deliveries failed again in the hook's Transform/,
    );
  });

  it('portal-link posts the user, ttl and scopes and prints the URL alone on stdout', async () => {
    const url = `${SERVER}/_hookd/portal/open/tok`;
    answer('POST', '/_hookd/portal-links', 201, {
      Url: url,
      ExpiresAt: '2026-11-22T12:15:00.000Z',
      User: 'alice',
      Scopes: ['hooks:write'],
      ReadOnly: false,
    });
    const r = await hookctl(['portal-link', 'alice', '--ttl', '15m', '--scope', 'hooks:write']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(seen[0]!.body!), { User: 'alice', Ttl: '15m', Scopes: ['hooks:write'] });
    assert.equal(r.stdout, `${url}\n`);
  });

  it('users list and tokens create speak the users API', async () => {
    answer('GET', '/_hookd/users', 200, [
      { Name: 'alice', Scopes: ['own'], Permissions: [], Created: '2026-11-22T12:00:00.000Z' },
    ]);
    const list = await hookctl(['users', 'list', '-o', 'json']);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(
      (JSON.parse(list.stdout) as { Name: string }[]).map((u) => u.Name),
      ['alice'],
    );
    answer('POST', '/_hookd/users/alice/tokens', 201, {
      Id: 'tk_1',
      User: 'alice',
      Label: 'ci',
      Created: '2026-11-22T12:00:00.000Z',
      Token: 'hkd_new_token',
    });
    const t = await hookctl(['tokens', 'create', 'alice', '--label', 'ci']);
    assert.equal(t.code, 0, t.stderr);
    assert.deepEqual(JSON.parse(seen.at(-1)!.body!), { Label: 'ci' });
    assert.match(t.stdout, /hkd_new_token/);
  });
});
