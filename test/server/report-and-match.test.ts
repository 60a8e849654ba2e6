import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Hook } from '../../src/hook/hook.js';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import {
  addUser,
  createHook,
  type FireMark,
  firedCalls,
  fireMark,
  type ReceivedCallback,
  type Receiver,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';

// POST /report fires hooks exactly as proxied requests do (SPEC §9); POST /match is the dry run:
// the caller's hooks that would fire and the callbacks they would send, with nothing sent.

let upstream: Upstream;
let receiver: Receiver;
let d: TestDaemon;
let bobToken: string;
const hooks: Record<string, Hook> = {};

const TEMPLATE = '$REQUEST_METHOD|$REQUEST_PATH|$1|$REQUEST_URI|$STATUS_CODE';

before(async () => {
  // The upstream answers the status asked for in `?s=NNN`, so a proxied request and a reported
  // one can carry the same path, query and status.
  upstream = await startUpstream((req, res) => {
    req.resume();
    req.on('end', () => {
      const s = new URL(req.url ?? '/', 'http://x').searchParams.get('s');
      res.writeHead(s ? Number(s) : 200).end();
    });
  });
  receiver = await startReceiver();
  d = await startHookd({ upstream: upstream.url });
  bobToken = await addUser(d, 'bob');
  const common = { CallbackContent: TEMPLATE, CallbackContentMediaType: 'text/plain' };
  hooks.A = await createHook(d, {
    ...common,
    PathPattern: '/orders/(*)',
    Methods: ['GET', 'POST'],
    Type: 0,
    Callback: `${receiver.url}/A`,
  });
  hooks.B = await createHook(d, {
    ...common,
    PathPattern: '/orders/(*)',
    Methods: ['GET'],
    Type: 1,
    StatusCodeWhiteList: [200],
    Callback: `${receiver.url}/B`,
  });
  hooks.C = await createHook(d, {
    ...common,
    PathPattern: '/orders/(*)/$',
    Methods: ['*'],
    Type: 1,
    StatusCodeBlackList: [500],
    Callback: `${receiver.url}/C`,
  });
  hooks.E = await createHook(d, {
    ...common,
    PathPattern: '/orders/(*)',
    Methods: ['GET'],
    Type: 1,
    CallbackMethod: 'GET',
    Callback: `${receiver.url}/E?via=get`,
  });
  hooks.D = await createHook(
    d,
    {
      ...common,
      // No capture group: a `$1` would be refused (it can never render).
      CallbackContent: TEMPLATE.replace('$1', '-'),
      PathPattern: '/orders/*/items',
      Methods: ['GET'],
      Type: 1,
      Headers: { 'X-Bob': 'yes' },
      Callback: `${receiver.url}/D`,
    },
    { token: bobToken },
  );
});

after(async () => {
  await d?.close();
  await receiver?.close();
  await upstream?.close();
});

/** Where the fired count stood at the last reset: the callbacks collected are the ones fired since. */
let mark: FireMark;
async function resetReceiver(): Promise<void> {
  receiver.reset();
  mark = await fireMark(d.opsUrl, receiver);
}
beforeEach(resetReceiver);

interface Served {
  Method: string;
  Path: string;
  Query?: string;
  StatusCode?: number;
  Phase?: 'before' | 'after' | 'both';
}

/** Scenarios with the hooks each must fire. */
const scenarios: { served: Served; fires: string[] }[] = [
  {
    served: { Method: 'GET', Path: '/orders/o1', Query: 's=200', StatusCode: 200 },
    fires: ['A', 'B', 'C', 'E'],
  },
  {
    served: { Method: 'GET', Path: '/orders/o1/items', Query: 's=500', StatusCode: 500 },
    fires: ['A', 'D', 'E'],
  },
  { served: { Method: 'POST', Path: '/orders/o2', Query: 's=500', StatusCode: 500 }, fires: ['A'] },
  { served: { Method: 'DELETE', Path: '/orders/o%203', Query: 's=204', StatusCode: 204 }, fires: ['C'] },
  { served: { Method: 'GET', Path: '/other/o1', Query: 's=200', StatusCode: 200 }, fires: [] },
];

/** What each hook of this file sends for a served request, as `METHOD /receiver-path body`. */
function expectedCall(letter: string, s: Served): string {
  const status = letter === 'A' ? '' : String(s.StatusCode);
  // D's pattern has no capture group, so its template has a `-` there.
  const capture = letter === 'D' ? '-' : decodeURIComponent(s.Path.split('/')[2] ?? '');
  const uri = `${d.url}${s.Path}${s.Query ? `?${s.Query}` : ''}`;
  if (letter === 'E') return 'GET /E?via=get ';
  return `POST /${letter} ${s.Method}|${s.Path}|${capture}|${uri}|${status}`;
}

const describeCalls = (calls: ReceivedCallback[]): string[] =>
  calls.map((c) => `${c.method} ${c.url} ${c.body}`).sort();

async function collect(n: number): Promise<string[]> {
  if (n > 0) await receiver.waitFor(n);
  return describeCalls(await firedCalls(d.opsUrl, receiver, mark));
}

async function proxy(s: Served): Promise<void> {
  const res = await fetch(`${d.url}${s.Path}${s.Query ? `?${s.Query}` : ''}`, { method: s.Method });
  await res.arrayBuffer();
  assert.equal(res.status, s.StatusCode);
}

/** `token: null` sends no Authorization header. */
async function report(body: unknown, token: string | null = d.token) {
  return api<{ accepted: number; fired: number }>(d.url, token ?? undefined, 'POST', '/_hookd/report', body);
}

describe('POST /report', () => {
  for (const { served, fires } of scenarios) {
    it(`fires as the proxy does for ${served.Method} ${served.Path} → ${served.StatusCode}`, async () => {
      const want = fires.map((l) => expectedCall(l, served)).sort();

      await proxy(served);
      const proxied = await collect(want.length);
      assert.deepEqual(proxied, want, 'proxied');

      await resetReceiver();
      const res = await report(served);
      assert.equal(res.status, 202, res.text);
      assert.deepEqual(res.body, { accepted: 1, fired: fires.length });
      assert.deepEqual(await collect(want.length), proxied, 'reported');
    });
  }

  it('takes a batch and fires for each item', async () => {
    const all = scenarios.map((s) => s.served);
    const want = scenarios.flatMap(({ served, fires }) => fires.map((l) => expectedCall(l, served))).sort();
    const res = await report(all);
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(res.body, { accepted: all.length, fired: want.length });
    assert.deepEqual(await collect(want.length), want);
  });

  it('fires BeforeCompletion hooks for Phase before, AfterCompletion ones for after, both for both', async () => {
    const base: Served = { Method: 'GET', Path: '/orders/o7', Query: 'p=1', StatusCode: 200 };
    const cases: [Served, string[]][] = [
      [{ ...base, Phase: 'before' }, ['A']],
      [{ ...base, Phase: 'after' }, ['B', 'C', 'E']],
      [{ ...base, Phase: 'both' }, ['A', 'B', 'C', 'E']],
      [base, ['A', 'B', 'C', 'E']], // a status without a phase means both
      [{ Method: 'GET', Path: '/orders/o7', Query: 'p=1' }, ['A']], // no status: before only
    ];
    for (const [served, letters] of cases) {
      await resetReceiver();
      const res = await report(served);
      assert.equal(res.status, 202, res.text);
      assert.equal(res.body.fired, letters.length, JSON.stringify(served));
      const want = letters
        .map((l) => expectedCall(l, { ...served, StatusCode: served.StatusCode ?? 0 }))
        .sort();
      assert.deepEqual(await collect(want.length), want, JSON.stringify(served));
    }
  });

  it('reads a method in any case, as the proxy would have seen it upper-cased', async () => {
    const res = await report({ Method: 'post', Path: '/orders/o8', Phase: 'before' });
    assert.equal(res.status, 202);
    assert.deepEqual(await collect(1), [expectedCall('A', { Method: 'POST', Path: '/orders/o8' })]);
  });

  it('treats a query string written into Path as the proxy does (or refuses it)', async () => {
    const res = await report({ Method: 'GET', Path: '/orders/o9?x=1', StatusCode: 200, Phase: 'after' });
    if (res.status === 400) {
      assert.match(res.text, /Path/);
      return;
    }
    assert.equal(res.status, 202);
    const served = { Method: 'GET', Path: '/orders/o9', Query: 'x=1', StatusCode: 200 };
    assert.deepEqual(await collect(3), ['B', 'C', 'E'].map((l) => expectedCall(l, served)).sort());
  });

  it('refuses invalid reports with 400, naming every field, and fires nothing', async () => {
    const res = await api<{ code: string; errors: { field: string; message: string }[] }>(
      d.url,
      d.token,
      'POST',
      '/_hookd/report',
      [
        { Method: 'GET' },
        { Path: 'no-slash', Phase: 'after', Extra: 1 },
        { Method: 'GET', Path: '/orders/x', StatusCode: 99, Phase: 'sometimes' },
        { Method: 'GET', Path: '/orders/ok', StatusCode: 200 },
      ],
    );
    assert.equal(res.status, 400);
    assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.equal(res.body.code, 'VALIDATION_FAILED');
    const fields = res.body.errors.map((e) => e.field).sort();
    assert.deepEqual(
      fields,
      [
        '[0].Path',
        '[1].Extra',
        '[1].Method',
        '[1].Path',
        '[1].StatusCode',
        '[2].Phase',
        '[2].StatusCode',
      ].sort(),
    );
    for (const e of res.body.errors) assert.ok(e.message.length > 0);

    const single = await api<{ errors: { field: string }[] }>(d.url, d.token, 'POST', '/_hookd/report', {});
    assert.equal(single.status, 400);
    assert.deepEqual(single.body.errors.map((e) => e.field).sort(), ['Method', 'Path']);

    for (const bad of [
      [],
      Array.from({ length: 1001 }, () => ({ Method: 'GET', Path: '/orders/x' })),
      '{oops',
    ]) {
      const r = await api(d.url, d.token, 'POST', '/_hookd/report', bad);
      assert.equal(r.status, 400, JSON.stringify(bad).slice(0, 50));
    }
    assert.deepEqual(
      await firedCalls(d.opsUrl, receiver, mark),
      [],
      'a refused report fires nothing, not even its valid items',
    );
  });

  it('answers 401 without a valid token and fires nothing', async () => {
    const served = { Method: 'GET', Path: '/orders/o1', StatusCode: 200 };
    for (const token of [null, 'hkd_not-a-real-token', `${d.token}x`]) {
      const res = await report(served, token);
      assert.equal(res.status, 401);
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
    }
    assert.deepEqual(await firedCalls(d.opsUrl, receiver, mark), []);
  });
});

describe('POST /match (dry run)', () => {
  interface Preview {
    HookId: string;
    Type: number;
    Captures: string[];
    Request: { Method: string; Url: string; Headers: Record<string, string>; Body?: string };
  }

  async function match(body: unknown, token = d.token) {
    return api<Preview[]>(d.url, token, 'POST', '/_hookd/match', body);
  }

  it("returns only the caller's hooks, with the rendered callback, and sends nothing", async () => {
    const res = await match({ Method: 'GET', Path: '/orders/o1/items?x=1', StatusCode: 200 });
    assert.equal(res.status, 200, res.text);
    const byId = new Map(res.body.map((p) => [p.HookId, p]));
    // Bob's hook D matches the path too, but it is not the caller's.
    assert.deepEqual([...byId.keys()].sort(), [hooks.A!.Id, hooks.B!.Id, hooks.E!.Id].sort());
    const uri = `${d.url}/orders/o1/items?x=1`;
    assert.deepEqual(byId.get(hooks.A!.Id), {
      HookId: hooks.A!.Id,
      Type: 0,
      Captures: ['o1'],
      Request: {
        Method: 'POST',
        Url: `${receiver.url}/A`,
        Headers: { 'content-type': 'text/plain' },
        Body: `GET|/orders/o1/items|o1|${uri}|`,
      },
    });
    assert.equal(byId.get(hooks.B!.Id)!.Request.Body, `GET|/orders/o1/items|o1|${uri}|200`);
    const e = byId.get(hooks.E!.Id)!;
    assert.equal(e.Request.Method, 'GET');
    assert.equal(e.Request.Url, `${receiver.url}/E?via=get`);
    assert.equal('Body' in e.Request, false, 'a GET callback has no body');

    const bob = await match(
      { Method: 'GET', Path: '/orders/o1/items', Query: 'y=2', StatusCode: 200 },
      bobToken,
    );
    assert.equal(bob.status, 200);
    assert.deepEqual(bob.body, [
      {
        HookId: hooks.D!.Id,
        Type: 1,
        Captures: [],
        StatusCodeWhiteList: [],
        StatusCodeBlackList: [],
        Request: {
          Method: 'POST',
          Url: `${receiver.url}/D`,
          Headers: { 'X-Bob': 'yes', 'content-type': 'text/plain' },
          Body: `GET|/orders/o1/items|-|${d.url}/orders/o1/items?y=2|200`,
        },
      },
    ]);
    assert.deepEqual(await firedCalls(d.opsUrl, receiver, mark), [], 'a dry run sends nothing');
  });

  it('judges the status lists when a status is given, and marks hooks with lists NeedsStatus when not', async () => {
    const ids = async (body: unknown) => {
      const r = await match(body);
      assert.equal(r.status, 200, r.text);
      return r.body.map((p) => p.HookId).sort();
    };
    const { A, B, C, E } = hooks as Record<string, Hook>;
    assert.deepEqual(await ids({ Method: 'GET', Path: '/orders/o1' }), [A!.Id, B!.Id, C!.Id, E!.Id].sort());
    const undecided = (await match({ Method: 'GET', Path: '/orders/o1' })).body
      .filter((p) => (p as unknown as { NeedsStatus?: boolean }).NeedsStatus === true)
      .map((p) => p.HookId)
      .sort();
    assert.deepEqual(undecided, [B!.Id, C!.Id].sort(), 'only the hooks whose lists decide');
    assert.deepEqual(
      await ids({ Method: 'GET', Path: '/orders/o1', StatusCode: 500 }),
      [A!.Id, E!.Id].sort(),
    );
    assert.deepEqual(
      await ids({ Method: 'GET', Path: '/orders/o1', StatusCode: 200 }),
      [A!.Id, B!.Id, C!.Id, E!.Id].sort(),
    );
    assert.deepEqual(await ids({ Method: 'PATCH', Path: '/orders/o1', StatusCode: 200 }), [C!.Id]);
    assert.deepEqual(await ids({ Method: 'GET', Path: '/nothing/here', StatusCode: 200 }), []);
    assert.deepEqual(await firedCalls(d.opsUrl, receiver, mark), []);
  });

  it('refuses an invalid dry run with 400 and an unauthenticated one with 401', async () => {
    const bad = await api<{ code: string; errors: { field: string }[] }>(
      d.url,
      d.token,
      'POST',
      '/_hookd/match',
      {
        Method: 'GET',
      },
    );
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'VALIDATION_FAILED');
    assert.deepEqual(
      bad.body.errors.map((e) => e.field),
      ['Path'],
    );
    const anon = await api(d.url, undefined, 'POST', '/_hookd/match', { Method: 'GET', Path: '/orders/o1' });
    assert.equal(anon.status, 401);
  });
});
