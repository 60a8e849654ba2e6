import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
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
  send,
  sleep,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';

// Firing rules over real HTTP (SPEC §3, §4, §5): which proxied requests fire which hooks, when,
// and what the callback looks like on the wire.

let receiver: Receiver;
let upstream: Upstream;
let d: TestDaemon;
/** `performance.now()` at which the upstream sent its answer to the last `/slow/…` request. */
let slowAnsweredAt = 0;

function upstreamHandler(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  req.on('end', async () => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path.startsWith('/slow/')) {
      // Holds the answer until a callback has arrived, however long that takes: a
      // BeforeCompletion hook that needed the response to fire would never fire, and the test
      // would end at its timeout instead.
      await receiver.waitFor(1, 600_000).catch(() => undefined);
      slowAnsweredAt = performance.now();
    }
    const m = /^\/status\/(\d{3})/.exec(path);
    res.writeHead(m ? Number(m[1]) : 200, { 'content-type': 'text/plain' }).end('upstream says hi');
  });
}

before(async () => {
  receiver = await startReceiver();
  upstream = await startUpstream(upstreamHandler);
  d = await startHookd({ upstream: upstream.url });
});

after(async () => {
  await d?.close();
  await upstream?.close();
  await receiver?.close();
});

/** Where the fired count stood when the test began: its callbacks are the ones fired since. */
let mark: FireMark;
beforeEach(async () => {
  receiver.reset();
  mark = await fireMark(d.opsUrl, receiver);
});

/** Hooks created by a test, deleted after it so that tests do not see each other's callbacks. */
const created: Hook[] = [];
async function hook(body: Record<string, unknown>): Promise<Hook> {
  const h = await createHook(d, { Methods: ['GET'], Callback: `${receiver.url}/cb`, ...body });
  created.push(h);
  return h;
}
async function dropHooks(): Promise<void> {
  for (const h of created.splice(0)) {
    const res = await api(d.url, d.token, 'DELETE', `/hooks/${h.Id}`);
    assert.equal(res.status, 204);
  }
}

async function get(path: string, init: RequestInit = {}): Promise<number> {
  const res = await fetch(d.url + path, init);
  await res.arrayBuffer();
  return res.status;
}

const bodies = (calls: ReceivedCallback[]): string[] => calls.map((c) => c.body).sort();

describe('BeforeCompletion (Type 0)', () => {
  beforeEach(dropHooks);
  after(dropHooks);

  it('fires while a slow upstream is still answering, with an empty $STATUS_CODE', {
    timeout: 60_000,
  }, async () => {
    await hook({
      PathPattern: '/slow/(*)',
      Type: 0,
      CallbackContent: '{"id":"$1","status":"$STATUS_CODE","method":"$REQUEST_METHOD"}',
    });
    slowAnsweredAt = 0;
    const res = await send(`${d.url}/slow/s1`);
    assert.equal(res.status, 200);
    const [call] = await receiver.waitFor(1);
    assert.ok(slowAnsweredAt > 0);
    assert.ok(
      call!.arrivedAt < slowAnsweredAt,
      'the callback must arrive before the upstream has answered the triggering request',
    );
    assert.ok(call!.arrivedAt < res.endedAt);
    assert.deepEqual(JSON.parse(call!.body), { id: 's1', status: '', method: 'GET' });
  });

  it('does not hold the request up while the receiver is slow', async () => {
    await hook({ PathPattern: '/fast', Type: 0, CallbackContent: 'before' });
    await hook({ PathPattern: '/fast', Type: 1, CallbackContent: 'after' });
    receiver.hold();
    try {
      const outcome = await Promise.race([
        send(`${d.url}/fast/1`),
        sleep(5000).then(() => 'held up' as const),
      ]);
      assert.notEqual(outcome, 'held up', 'the proxied request waited for the callback receiver');
      assert.equal((outcome as { status: number }).status, 200);
      const calls = await receiver.waitFor(2);
      assert.deepEqual(bodies(calls), ['after', 'before']);
      assert.equal(receiver.answered(), 0, 'the receiver had not answered yet');
    } finally {
      receiver.release();
    }
  });
});

describe('triggering requests with a body', () => {
  beforeEach(dropHooks);
  after(dropHooks);

  it('fires a BeforeCompletion hook for a POST with a body', async () => {
    await hook({
      PathPattern: '/upload/(*)',
      Methods: ['POST'],
      Type: 0,
      CallbackContent: '$1 $REQUEST_URI',
    });
    assert.equal(await get('/upload/u1?a=1', { method: 'POST', body: 'payload' }), 200);
    const [c] = await receiver.waitFor(1);
    assert.equal(c!.body, `u1 ${d.url}/upload/u1?a=1`);
  });

  it('fires an AfterCompletion hook for a POST with a body', async () => {
    // A daemon of its own: this once crashed hookd (req.socket is null by the time the response
    // finishes), and a crash must not take the file's shared daemon with it.
    const own = await startHookd({ upstream: upstream.url });
    try {
      await createHook(own, {
        PathPattern: '/upload/(*)',
        Methods: ['POST', 'PUT'],
        Type: 1,
        Callback: `${receiver.url}/cb`,
        CallbackContent: '$1 $STATUS_CODE',
      });
      // One request only: while the bug lasts, a second uncaught error would land after this
      // test has already failed and fail the whole file.
      const res = await fetch(`${own.url}/upload/u2`, { method: 'POST', body: 'payload' });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      await receiver.waitFor(1, 2000);
      assert.deepEqual(bodies(receiver.calls), ['u2 200']);
    } finally {
      await own.close();
    }
  });
});

describe('status code lists (AfterCompletion)', () => {
  before(async () => {
    const lists: [string, Record<string, number[]>][] = [
      ['white', { StatusCodeWhiteList: [200, 201] }],
      ['black', { StatusCodeBlackList: [404] }],
      ['both', { StatusCodeWhiteList: [200, 404], StatusCodeBlackList: [404] }],
      ['neither', {}],
    ];
    for (const [name, l] of lists) {
      await hook({
        PathPattern: '/status/(*)',
        Type: 1,
        CallbackContent: `{"hook":"${name}","status":$STATUS_CODE,"text":"$STATUS_CODE"}`,
        ...l,
      });
    }
  });
  after(dropHooks);

  it('fires iff (white list empty or status in it) and status not in the black list', async () => {
    const statuses = [200, 201, 404, 500];
    for (const s of statuses) assert.equal(await get(`/status/${s}`), s);
    const expected = [
      ['white', 200],
      ['white', 201],
      ['black', 200],
      ['black', 201],
      ['black', 500],
      ['both', 200],
      ['neither', 200],
      ['neither', 201],
      ['neither', 404],
      ['neither', 500],
    ].map(([hook, status]) => JSON.stringify({ hook, status, text: String(status) }));
    await receiver.waitFor(expected.length);
    const calls = await firedCalls(d.opsUrl, receiver, mark);
    assert.deepEqual(bodies(calls), expected.sort());
  });
});

describe('matching', () => {
  beforeEach(dropHooks);
  after(dropHooks);

  it('`$` anchors the end: the time series fires, its data does not', async () => {
    await hook({ PathPattern: '/repositories/*/timeseries/(*)/$', CallbackContent: '$1 $REQUEST_PATH' });
    await get('/repositories/r1/timeseries/ts1/data');
    await get('/repositories/r1/timeseries/ts1/attributes/unit');
    await get('/repositories/r1/timeseries');
    await get('/repositories/r1/timeseries/ts1?with=data');
    await receiver.waitFor(1);
    const calls = await firedCalls(d.opsUrl, receiver, mark);
    assert.deepEqual(bodies(calls), ['ts1 /repositories/r1/timeseries/ts1']);
  });

  it('Methods ["*"] fires for any method; a listed method only for itself', async () => {
    await hook({ PathPattern: '/any', Methods: ['*'], CallbackContent: 'any $REQUEST_METHOD' });
    await hook({
      PathPattern: '/any',
      Methods: ['patch', 'DELETE'],
      CallbackContent: 'listed $REQUEST_METHOD',
    });
    for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      await get('/any/thing', { method });
    }
    const expected = [
      'any GET',
      'any POST',
      'any PUT',
      'any DELETE',
      'any PATCH',
      'any OPTIONS',
      'listed DELETE',
      'listed PATCH',
    ].sort();
    await receiver.waitFor(expected.length);
    assert.deepEqual(bodies(await firedCalls(d.opsUrl, receiver, mark)), expected);
  });

  it('never looks at the query string', async () => {
    await hook({ PathPattern: '/q/(*)/$', CallbackContent: '$1 $REQUEST_PATH' });
    await hook({ PathPattern: '/q/a/b', CallbackContent: 'ab $REQUEST_PATH' });
    await get('/q/a?x=/b/c'); // path /q/a: the anchored hook fires, /q/a/b does not
    await get('/q?x=/a'); // path /q: neither
    await get('/q/a/b?z=%2F'); // path /q/a/b: only the prefix hook
    const expected = ['a /q/a', 'ab /q/a/b'];
    await receiver.waitFor(expected.length);
    assert.deepEqual(bodies(await firedCalls(d.opsUrl, receiver, mark)), expected);
  });

  it('decodes captured segments and leaves literal segments case-sensitive', async () => {
    await hook({ PathPattern: '/Case/(*)', CallbackContent: '[$1]' });
    await get('/Case/a%20b%2Fc');
    await get('/case/x');
    await receiver.waitFor(1);
    assert.deepEqual(bodies(await firedCalls(d.opsUrl, receiver, mark)), ['[a b/c]']);
  });
});

describe('callback rendering', () => {
  beforeEach(dropHooks);
  after(dropHooks);

  it('renders $REQUEST_METHOD, $HOOK_ID, $TIMESTAMP, $STATUS_CODE and the braced form', async () => {
    const h = await hook({
      PathPattern: '/vars/(*)',
      Methods: ['POST'],
      Type: 1,
      CallbackContent:
        '{"m":"$REQUEST_METHOD","id":"$HOOK_ID","t":"$TIMESTAMP","s":$STATUS_CODE,"p":"${REQUEST_PATH}x","c":"${1}2","u":"$UNKNOWN $schema"}',
    });
    const t0 = Date.now();
    await get('/vars/v1?k=v', { method: 'POST' });
    const [call] = await receiver.waitFor(1);
    const t1 = Date.now();
    const doc = JSON.parse(call!.body) as Record<string, unknown>;
    assert.equal(doc.m, 'POST');
    assert.equal(doc.id, h.Id);
    assert.equal(doc.s, 200);
    assert.equal(doc.p, '/vars/v1x');
    assert.equal(doc.c, 'v12');
    assert.equal(
      doc.u,
      '$UNKNOWN $schema',
      'unknown variables stay as written ($0, $9 are refused at create)',
    );
    assert.match(String(doc.t), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|\+00:00)$/);
    const t = Date.parse(String(doc.t));
    assert.ok(t >= t0 - 1 && t <= t1 + 1, `timestamp ${doc.t} outside the request`);
  });

  it('sends the default JSON event document when CallbackContent is absent', async () => {
    const after1 = await hook({ PathPattern: '/doc/(*)/(*)', Type: 1 });
    const before0 = await hook({ PathPattern: '/doc/(*)', Type: 0 });
    await get('/doc/a%20b/c/d?x=1');
    const calls = await receiver.waitFor(2);
    const docs = new Map(
      calls.map((c) => {
        assert.equal(c.headers['content-type'], 'application/json');
        const doc = JSON.parse(c.body) as { hookId: string };
        return [doc.hookId, doc];
      }),
    );
    const uri = `${d.url}/doc/a%20b/c/d?x=1`;
    const a = docs.get(after1.Id) as Record<string, unknown>;
    assert.deepEqual(
      { ...a, timestamp: typeof a.timestamp },
      {
        event: 'hook.fired',
        hookId: after1.Id,
        hookType: 1,
        hookTypeName: 'AfterCompletion',
        request: { method: 'GET', path: '/doc/a%20b/c/d', uri },
        statusCode: 200,
        captures: ['a b', 'c'],
        timestamp: 'string',
      },
    );
    const b = docs.get(before0.Id) as Record<string, unknown>;
    assert.equal(b.hookType, 0);
    assert.equal(b.hookTypeName, 'BeforeCompletion');
    assert.equal('statusCode' in b, false, 'no status is known before completion');
    assert.deepEqual(b.captures, ['a b']);
    assert.ok(!Number.isNaN(Date.parse(String(b.timestamp))));
  });

  it('sends no body with GET and DELETE callbacks, and one with PUT and PATCH', async () => {
    for (const CallbackMethod of ['GET', 'DELETE', 'PUT', 'PATCH']) {
      await hook({
        PathPattern: '/methods',
        CallbackMethod,
        Callback: `${receiver.url}/m/${CallbackMethod}`,
        CallbackContent: 'body of $REQUEST_PATH',
        Headers: { 'X-Which': CallbackMethod },
      });
    }
    await get('/methods');
    const calls = await receiver.waitFor(4);
    const by = new Map(calls.map((c) => [c.method, c]));
    for (const m of ['GET', 'DELETE']) {
      const c = by.get(m)!;
      assert.equal(c.url, `/m/${m}`);
      assert.equal(c.body, '');
      assert.equal(c.headers['content-type'], undefined);
      assert.ok(!c.headers['content-length'] || c.headers['content-length'] === '0');
      assert.equal(c.headers['transfer-encoding'], undefined);
      assert.equal(c.headers['x-which'], m);
    }
    for (const m of ['PUT', 'PATCH']) {
      const c = by.get(m)!;
      assert.equal(c.body, 'body of /methods');
      assert.equal(c.headers['content-type'], 'application/json');
    }
  });

  it('sends the hook Headers and the media type as Content-Type', async () => {
    await hook({
      PathPattern: '/headers/(*)',
      CallbackContent: '{"name":"$1"}',
      CallbackContentMediaType: 'application/vnd.acme.event+json; charset=utf-8',
      Headers: { 'X-Api-Key': 'k-123', 'X-Trace': 'a b, c', Authorization: 'Bearer chat-token' },
    });
    await get('/headers/q%22%5C%0A');
    const [c] = await receiver.waitFor(1);
    assert.equal(c!.headers['x-api-key'], 'k-123');
    assert.equal(c!.headers['x-trace'], 'a b, c');
    assert.equal(c!.headers.authorization, 'Bearer chat-token');
    assert.equal(c!.headers['content-type'], 'application/vnd.acme.event+json; charset=utf-8');
    assert.deepEqual(JSON.parse(c!.body), { name: 'q"\\\n' }, '*+json is escaped like JSON');
  });

  it('escapes variables for XML', async () => {
    await hook({
      PathPattern: '/xml/(*)',
      CallbackContent: '<event method="$REQUEST_METHOD" path="$REQUEST_PATH"><name>$1</name></event>',
      CallbackContentMediaType: 'application/xml',
    });
    const rawPath = "/xml/%3Cb%3E%20%26%20%22q%22'%0D%0A/it's&more";
    await send(d.url + rawPath);
    const [c] = await receiver.waitFor(1);
    const xml = (s: string) =>
      s
        .replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;')
        .replace(/"/g, '&quot;')
        .replace(/'/g, '&apos;')
        .replace(/\r/g, '&#xD;')
        .replace(/\n/g, '&#xA;');
    assert.equal(c!.headers['content-type'], 'application/xml');
    assert.equal(
      c!.body,
      `<event method="GET" path="${xml(rawPath)}"><name>${xml('<b> & "q"\'\r\n')}</name></event>`,
    );
    assert.doesNotMatch(c!.body.replace(/<\/?(event|name)\b[^>]*>/g, ''), /[<>"]/);
  });

  it('percent-encodes variables for application/x-www-form-urlencoded', async () => {
    await hook({
      PathPattern: '/form/(*)',
      CallbackContent: 'path=$REQUEST_PATH&name=$1&m=$REQUEST_METHOD',
      CallbackContentMediaType: 'application/x-www-form-urlencoded',
    });
    const rawPath = '/form/a%26b%3Dc%20d%2B%C3%A9%25/x&y=z';
    await send(d.url + rawPath);
    const [c] = await receiver.waitFor(1);
    assert.equal(c!.headers['content-type'], 'application/x-www-form-urlencoded');
    const form = new URLSearchParams(c!.body);
    assert.deepEqual([...form.keys()], ['path', 'name', 'm']);
    assert.equal(form.get('path'), rawPath);
    assert.equal(form.get('name'), 'a&b=c d+é%');
    assert.equal(form.get('m'), 'GET');
  });

  it('inserts variables as they are for other media types', async () => {
    await hook({
      PathPattern: '/text/(*)',
      CallbackContent: 'read $1 at "$REQUEST_PATH"',
      CallbackContentMediaType: 'text/plain; charset=utf-8',
    });
    await get('/text/%22%3Cx%3E');
    const [c] = await receiver.waitFor(1);
    assert.equal(c!.body, 'read "<x> at "/text/%22%3Cx%3E"');
  });
});

describe('$REQUEST_URI', () => {
  const template = {
    PathPattern: '/u/(*)',
    CallbackContent: '$REQUEST_URI',
    CallbackContentMediaType: 'text/plain',
  };
  const forwarded = {
    'X-Forwarded-Proto': 'https',
    'X-Forwarded-Host': 'shop.example.com',
    'X-Forwarded-For': '203.0.113.9',
  };

  it('uses the request scheme and Host, ignoring X-Forwarded-* from an untrusted peer', async () => {
    await hook(template);
    try {
      const res = await send(`${d.url}/u/a?x=1&y=%20`, { headers: forwarded });
      assert.equal(res.status, 200);
      const [c] = await receiver.waitFor(1);
      assert.equal(c!.body, `${d.url}/u/a?x=1&y=%20`);
    } finally {
      await dropHooks();
    }
  });

  it('believes X-Forwarded-Proto/-Host from a trusted proxy', async () => {
    const t = await startHookd({ upstream: upstream.url, trustedProxies: ['127.0.0.1'] });
    try {
      await createHook(t, { ...template, Methods: ['GET'], Callback: `${receiver.url}/cb` });
      upstream.reset();
      const since = await fireMark(t.opsUrl, receiver);
      await send(`${t.url}/u/a?x=1`, { headers: forwarded });
      await send(`${t.url}/u/b`, {
        headers: { 'X-Forwarded-Proto': 'gopher', 'X-Forwarded-Host': 'h.example' },
      });
      await send(`${t.url}/u/c`, {
        headers: { 'X-Forwarded-Proto': 'https, http', 'X-Forwarded-Host': 'first.example, second.example' },
      });
      await receiver.waitFor(3);
      assert.deepEqual(bodies(await firedCalls(t.opsUrl, receiver, since)), [
        'http://h.example/u/b',
        'https://first.example/u/c',
        'https://shop.example.com/u/a?x=1',
      ]);
      const seen = upstream.requests[0]!;
      assert.equal(seen.headers['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
      assert.equal(seen.headers['x-forwarded-host'], 'shop.example.com');
      assert.equal(seen.headers['x-forwarded-proto'], 'https');
    } finally {
      await t.close();
    }
  });

  it('uses publicBaseUrl when configured, for proxied and reported requests', async () => {
    const p = await startHookd({ upstream: upstream.url, publicBaseUrl: 'https://public.example.com' });
    try {
      await createHook(p, { ...template, Methods: ['GET'], Callback: `${receiver.url}/cb` });
      const since = await fireMark(p.opsUrl, receiver);
      await send(`${p.url}/u/a?x=1`, { headers: forwarded });
      const report = await api(p.url, p.token, 'POST', '/_hookd/report', {
        Method: 'GET',
        Path: '/u/r',
        Query: 'q=2',
        StatusCode: 200,
      });
      assert.equal(report.status, 202);
      await receiver.waitFor(2);
      assert.deepEqual(bodies(await firedCalls(p.opsUrl, receiver, since)), [
        'https://public.example.com/u/a?x=1',
        'https://public.example.com/u/r?q=2',
      ]);
    } finally {
      await p.close();
    }
  });
});

describe('many hooks of many users', () => {
  const USERS = ['admin', 'alice', 'bob', 'carol'];
  const tokens = new Map<string, string>();
  let m: TestDaemon;
  let all: Hook[] = [];

  /** An independent reading of SPEC §3, to compute which hooks should fire. */
  function matches(pattern: string, path: string): boolean {
    const pat = pattern
      .replace(/^\//, '')
      .split('/')
      .filter((s) => s !== '');
    const anchored = pat.at(-1) === '$';
    if (anchored) pat.pop();
    const segs = path
      .split('?')[0]!
      .slice(1)
      .split('/')
      .filter((s) => s !== '')
      .map(decodeURIComponent);
    if (segs.length < pat.length || (anchored && segs.length !== pat.length)) return false;
    return pat.every((p, i) => (p === '*' || p === '(*)' ? segs[i] !== '' : p === segs[i]));
  }
  function expected(method: string, path: string, status = 200): string[] {
    return all
      .filter(
        (h) =>
          matches(h.PathPattern, path) &&
          (h.Methods.includes('*') || h.Methods.includes(method)) &&
          (h.Type === 0 ||
            ((h.StatusCodeWhiteList.length === 0 || h.StatusCodeWhiteList.includes(status)) &&
              !h.StatusCodeBlackList.includes(status))),
      )
      .map((h) => `${h.Id} ${method} ${path.split('?')[0]}`)
      .sort();
  }
  function spec(i: number): Record<string, unknown> {
    const kinds: [string, string[]][] = [
      [`/svc/${i % 50}/items/(*)`, ['GET']],
      [i % 200 === 1 ? '/svc/*/items/(*)/$' : `/svc/${i}/x/$`, ['*']],
      [`/other/${i}/(*)`, ['GET']],
      [`/svc/${i % 25}`, ['POST']],
      [`svc/${i % 50}/items`, ['GET', 'PUT']],
      [`/svc/${i % 50}/items/*/$`, ['GET']],
      [`/a/b/c/${i}/(*)/(*)`, ['GET']],
      [i === 7 ? '/' : `/deep/${i}/*/$`, ['GET']],
    ];
    const [PathPattern, Methods] = kinds[i % 8]!;
    const Type = i % 3 === 0 ? 0 : 1;
    return {
      PathPattern,
      Methods,
      Type,
      ...(Type === 1 && i % 13 === 0 && { StatusCodeWhiteList: [201] }),
      ...(Type === 1 && i % 11 === 0 && { StatusCodeBlackList: [404] }),
      Callback: `${receiver.url}/many`,
      CallbackContent: '$HOOK_ID $REQUEST_METHOD $REQUEST_PATH',
      CallbackContentMediaType: 'text/plain',
      Persist: false,
    };
  }

  async function run(method: string, path: string): Promise<void> {
    receiver.reset();
    const since = await fireMark(m.opsUrl, receiver);
    const want = expected(method, path);
    assert.ok(want.length > 0 || path.startsWith('/nothing'));
    const res = await fetch(m.url + path, { method });
    await res.arrayBuffer();
    if (want.length) await receiver.waitFor(want.length);
    const got = bodies(await firedCalls(m.opsUrl, receiver, since));
    assert.deepEqual(got, want, `${method} ${path}`);
  }

  before(async () => {
    m = await startHookd({ upstream: upstream.url });
    tokens.set('admin', m.token);
    for (const u of USERS.slice(1)) tokens.set(u, await addUser(m, u));
    // 2,000 hooks through the service (the API would only add HTTP round trips); a few below
    // through the API, to delete and replace them as their owners.
    for (let i = 0; i < 2000; i++) all.push(await m.hookd.hooks.create(USERS[i % USERS.length]!, spec(i)));
    assert.equal(m.hookd.engine.size, 2000);
  });
  after(async () => {
    await m?.close();
  });

  const requests: [string, string][] = [
    ['GET', '/svc/7/items/abc'],
    ['POST', '/svc/3?x=1'],
    ['PUT', '/svc/12/items'],
    ['GET', '/other/42/z/more'],
    ['GET', '/a/b/c/14/x/y'],
    ['GET', '/svc/1/items/q'],
    ['DELETE', '/svc/9/items/q'],
  ];

  it('fires exactly the matching hooks of every user', async () => {
    const owners = new Set<string>();
    for (const [method, path] of requests) {
      await run(method, path);
      for (const id of expected(method, path).map((s) => s.split(' ')[0])) {
        owners.add(all.find((h) => h.Id === id)!.Owner);
      }
    }
    assert.deepEqual([...owners].sort(), [...USERS].sort());
  });

  it('stops firing a deleted hook and follows a replaced one', async () => {
    const path = '/svc/7/items/abc';
    const ids = expected('GET', path).map((s) => s.split(' ')[0]!);
    const victim = all.find((h) => h.Id === ids[0])!;
    const changed = all.find((h) => h.Id === ids[1])!;
    assert.ok(victim && changed && victim.Id !== changed.Id);

    const del = await api(m.url, tokens.get(victim.Owner), 'DELETE', `/hooks/${victim.Id}`);
    assert.equal(del.status, 204);
    const put = await api<Hook>(m.url, tokens.get(changed.Owner), 'PUT', `/hooks/${changed.Id}`, {
      ...spec(0),
      PathPattern: '/replaced/(*)',
      Methods: ['GET'],
      Type: 1,
    });
    assert.equal(put.status, 200, put.text);
    all = all.filter((h) => h.Id !== victim.Id).map((h) => (h.Id === changed.Id ? put.body : h));

    const now = expected('GET', path);
    assert.equal(now.length, ids.length - 2);
    await run('GET', path);
    await run('GET', '/replaced/r1');
    assert.ok(expected('GET', '/replaced/r1').some((s) => s.startsWith(changed.Id)));
  });
});
