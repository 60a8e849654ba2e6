import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { proxyE2e } from '../helpers/proxy-e2e.js';
import { createHook, send } from '../helpers/servers.js';

// Filters through a real hookd in front of a real upstream: each hook below selects by what is
// inside the request (query, headers, JSON body) or its response, and the upstream must receive
// every body byte for byte whether or not a hook copies it.

const e2e = proxyE2e();

async function hook(path: string, extra: Record<string, unknown>) {
  return e2e.hook({
    PathPattern: path,
    Methods: ['*'],
    Callback: `${e2e.receiver.url}${path.replaceAll('(*)', 'x').replaceAll('*', 'y')}`,
    CallbackContent: '{"uri": "$REQUEST_URI"}',
    ...extra,
  });
}

describe('Filter end to end', () => {
  it('selects on the query, a header and the JSON body; others do not fire', async () => {
    const q = await hook('/q/*', { Filter: 'request.query.unit == "kWh"' });
    const h = await hook('/h/*', {
      Filter: '"x-tenant" in request.headers && request.headers["x-tenant"] == "acme"',
    });
    const b = await hook('/b/*', { Filter: 'request.body.quality == "bad"', Methods: ['POST'] });
    e2e.receiver.reset();
    await fetch(`${e2e.d.url}/q/1?unit=kWh`).then((r) => r.arrayBuffer());
    await fetch(`${e2e.d.url}/q/2?unit=MWh`).then((r) => r.arrayBuffer());
    await fetch(`${e2e.d.url}/h/1`, { headers: { 'x-tenant': 'acme' } }).then((r) => r.arrayBuffer());
    await fetch(`${e2e.d.url}/h/2`, { headers: { 'x-tenant': 'other' } }).then((r) => r.arrayBuffer());
    const post = (path: string, body: string, type = 'application/json') =>
      fetch(`${e2e.d.url}${path}`, { method: 'POST', headers: { 'content-type': type }, body }).then((r) =>
        r.arrayBuffer(),
      );
    await post('/b/1', JSON.stringify({ quality: 'bad', value: 3 }));
    await post('/b/2', JSON.stringify({ quality: 'good', value: 3 }));
    await post('/b/3', 'quality: bad', 'text/plain');
    await e2e.receiver.waitFor(3);
    await new Promise((r) => setTimeout(r, 400));
    const uris = e2e.receiver.calls.map((c) => new URL(JSON.parse(c.body).uri as string).pathname).sort();
    assert.deepEqual(uris, ['/b/1', '/h/1', '/q/1']);
    for (const x of [q, h, b]) await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${x.Id}`);
  });

  it('the upstream receives byte-identical bodies with and without a body-reading hook (large, chunked, over the limit)', async () => {
    const reader = await hook('/big/*', { Filter: 'request.body.kind == "x"', Methods: ['POST'] });
    const big = Buffer.alloc(300 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7) % 251;
    const json = Buffer.from(JSON.stringify({ kind: 'x', pad: 'y'.repeat(1000) }));
    const bodies = [big, json];
    const sendChunked = (path: string, body: Buffer) =>
      new Promise<void>((resolve, reject) => {
        const req = httpRequest(
          `${e2e.d.url}${path}`,
          { method: 'POST', headers: { 'content-type': 'application/json' } },
          (res) => {
            res.resume();
            res.on('end', () => resolve());
          },
        );
        req.on('error', reject);
        // Written in pieces with pauses: a chunked body that arrives over time.
        let at = 0;
        const next = () => {
          if (at >= body.length) return void req.end();
          req.write(body.subarray(at, at + 16 * 1024));
          at += 16 * 1024;
          setTimeout(next, 2);
        };
        next();
      });
    e2e.receiver.reset();
    for (const [i, body] of bodies.entries()) {
      for (const path of [`/big/${i}`, `/plain/${i}`]) {
        e2e.upstream.reset();
        await sendChunked(path, body);
        const seen = e2e.upstream.requests[0]!;
        // Framing is per hop (RFC 9112 §6.1): the proxy streams a body still arriving as chunked,
        // and one that has wholly arrived before the upstream connection is written (a short body
        // on a busy machine) with its length. Never both, never a wrong length.
        const framing = `${path}: ${JSON.stringify(seen.headers)} ${seen.url}`;
        if (seen.headers['transfer-encoding'] === undefined) {
          assert.equal(seen.headers['content-length'], String(body.length), framing);
        } else {
          assert.equal(seen.headers['transfer-encoding'], 'chunked', framing);
          assert.equal(seen.headers['content-length'], undefined, framing);
        }
        await new Promise((r) => setTimeout(r, 20));
        assert.ok(
          seen.body && Buffer.compare(seen.body, body) === 0,
          `${path}: the upstream got the same bytes`,
        );
        e2e.upstream.reset();
        const r = await send(`${e2e.d.url}${path}`, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(r.status, 200);
        assert.equal(JSON.parse(r.body).bodyBytes, body.length);
        assert.ok(Buffer.compare(e2e.upstream.requests[0]!.body!, body) === 0);
      }
    }
    // The small JSON body fired (twice: chunked and with a length); the 300 KiB one is over the
    // 64 KiB limit, so its body is null and the filter's error is no match.
    await e2e.receiver.waitFor(2);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(e2e.receiver.calls.length, 2);
    for (const c of e2e.receiver.calls) assert.equal(new URL(JSON.parse(c.body).uri).pathname, '/big/1');
    await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${reader.Id}`);
  });

  it('BeforeCompletion: a body filter fires once the body has arrived; a hook reading no body fires on arrival', async () => {
    const reader = await hook('/early/*', { Type: 0, Methods: ['POST'], Filter: 'request.body.n > 2' });
    const plain = await hook('/early/(*)', { Type: 0, Methods: ['POST'], Filter: 'captures[0] == "1"' });
    e2e.receiver.reset();
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        `${e2e.d.url}/early/1`,
        { method: 'POST', headers: { 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve());
        },
      );
      req.on('error', reject);
      req.write('{"n": ');
      // The body is held back: the hook that reads no body has fired meanwhile, the other has not.
      void e2e.receiver.waitFor(1).then(async () => {
        await new Promise((r) => setTimeout(r, 200));
        assert.equal(e2e.receiver.calls.length, 1);
        req.end('3}');
      }, reject);
    });
    const calls = await e2e.receiver.waitFor(2);
    assert.equal(calls.length, 2);
    for (const x of [reader, plain]) await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${x.Id}`);
  });

  it('request.bodyTruncated tells a filter the body was over the limit', async () => {
    const t = await hook('/trunc/*', { Filter: 'request.bodyTruncated', Methods: ['POST'] });
    e2e.receiver.reset();
    await send(`${e2e.d.url}/trunc/1`, { method: 'POST', body: Buffer.alloc(70 * 1024, 0x41) });
    await send(`${e2e.d.url}/trunc/2`, { method: 'POST', body: 'small' });
    await e2e.receiver.waitFor(1);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      e2e.receiver.calls.map((c) => new URL(JSON.parse(c.body).uri).pathname),
      ['/trunc/1'],
    );
    await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${t.Id}`);
  });

  it('AfterCompletion: response status, headers and JSON body', async () => {
    const s = await hook('/status/*', { Type: 1, Filter: 'response.status >= 500' });
    const rb = await hook('/rb/*', {
      Type: 1,
      Filter:
        'response.headers["content-type"].startsWith("application/json") && response.body.method == "PUT"',
    });
    e2e.receiver.reset();
    await fetch(`${e2e.d.url}/status/503`).then((r) => r.arrayBuffer());
    await fetch(`${e2e.d.url}/status/404`).then((r) => r.arrayBuffer());
    await fetch(`${e2e.d.url}/rb/1`, { method: 'PUT', body: 'x' }).then((r) => r.arrayBuffer());
    await fetch(`${e2e.d.url}/rb/2`, { method: 'POST', body: 'x' }).then((r) => r.arrayBuffer());
    await e2e.receiver.waitFor(2);
    await new Promise((r) => setTimeout(r, 300));
    const uris = e2e.receiver.calls.map((c) => new URL(JSON.parse(c.body).uri).pathname).sort();
    assert.deepEqual(uris, ['/rb/1', '/status/503']);
    for (const x of [s, rb]) await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${x.Id}`);
  });

  it('credentials and cookies are invisible to a filter', async () => {
    const c = await hook('/cred/*', {
      Filter:
        '!("authorization" in request.headers) && !("cookie" in request.headers) && !("proxy-authorization" in request.headers) && request.headers["x-seen"] == "1"',
    });
    e2e.receiver.reset();
    await fetch(`${e2e.d.url}/cred/1`, {
      headers: {
        authorization: 'Bearer s3cret',
        cookie: 'a=b',
        'proxy-authorization': 'Basic x',
        'x-seen': '1',
      },
    }).then((r) => r.arrayBuffer());
    await e2e.receiver.waitFor(1);
    // The upstream still got them: hiding is the filter's view only.
    assert.equal(e2e.upstream.requests.at(-1)!.headers.authorization, 'Bearer s3cret');
    await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${c.Id}`);
  });

  it('create-time errors name Filter with line:column and the closest name', async () => {
    const bad = async (Filter: string, Type = 0) => {
      const r = await api<{ errors: { field: string; message: string; line?: number; column?: number }[] }>(
        e2e.d.url,
        e2e.d.token,
        'POST',
        '/hooks',
        { PathPattern: '/e/*', Methods: ['GET'], Callback: `${e2e.receiver.url}/e`, Type, Filter },
      );
      assert.equal(r.status, 400, r.text);
      const e = r.body.errors.find((x) => x.field === 'Filter');
      assert.ok(e, r.text);
      return e;
    };
    const typo = await bad('requst.path == "/"');
    assert.equal(typo.message, "undeclared reference to 'requst' at 1:1; did you mean 'request'?");
    const field = await bad('request.method == "GET" &&\n  request.bdy.x == 1');
    assert.match(
      field.message,
      /undeclared reference to 'request\.bdy' at 2:3; did you mean 'request\.body'\?/,
    );
    assert.deepEqual([field.line, field.column], [2, 3]);
    const syntax = await bad('request.path ==\n');
    assert.match(syntax.message, /syntax error at \d+:\d+/);
    const resp = await bad('response.status == 500', 0);
    assert.match(resp.message, /Type 0/);
    const deep = await bad(`${'['.repeat(40)}true${']'.repeat(40)}`);
    assert.match(deep.message, /nests deeper than 32/);
    // Macros bind their own names: `h` is known inside exists().
    const ok = await e2e.hook({
      PathPattern: '/e/*',
      Methods: ['GET'],
      Callback: `${e2e.receiver.url}/e`,
      Filter: 'request.queryAll.exists(k, k == "a") && captures.size() >= 0',
    });
    await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${ok.Id}`);
  });

  it('an evaluation error is no match, counted and shown as LastFilterError', async () => {
    const h = await hook('/err/*', { Filter: 'request.query.missing == "x"' });
    e2e.receiver.reset();
    await fetch(`${e2e.d.url}/err/1`).then((r) => r.arrayBuffer());
    const got = await api<{ LastFilterError?: { At: string; Error: string } }>(
      e2e.d.url,
      e2e.d.token,
      'GET',
      `/hooks/${h.Id}`,
    );
    assert.ok(got.body.LastFilterError, got.text);
    assert.match(got.body.LastFilterError.Error, /missing/);
    assert.ok(!Number.isNaN(Date.parse(got.body.LastFilterError.At)));
    const metrics = await fetch(`${e2e.d.opsUrl}/metrics`).then((r) => r.text());
    const m = /^hookd_filter_errors_total (\d+)/m.exec(metrics);
    assert.ok(m && Number(m[1]) >= 1, 'hookd_filter_errors_total counts it');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(e2e.receiver.calls.length, 0);
    await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${h.Id}`);
  });
});

describe('Filter: the identity header and redacted query parameters', () => {
  let guarded: TestDaemon;
  before(async () => {
    guarded = await startHookd({
      upstream: e2e.upstream.url,
      identityHeader: 'X-Forwarded-User',
      trustedProxies: ['127.0.0.1'],
      redactQueryParams: ['token'],
    });
  });
  after(() => guarded?.close());

  it('a filter reads request.user, never the identity header itself nor a redacted parameter', async () => {
    const h = await createHook(guarded, {
      PathPattern: '/who/*',
      Methods: ['GET'],
      Callback: `${e2e.receiver.url}/who`,
      CallbackContent: '$REQUEST_USER',
      Filter:
        'request.user == "alice" && !("x-forwarded-user" in request.headers) && !("token" in request.query) && !("token" in request.queryAll) && !request.uri.contains("s3cret") && request.query.unit == "kWh"',
    });
    const anonymous = await createHook(guarded, {
      PathPattern: '/who/*',
      Methods: ['GET'],
      Callback: `${e2e.receiver.url}/anonymous`,
      Filter: 'request.user == null',
    });
    e2e.receiver.reset();
    for (const user of ['alice', undefined])
      await send(`${guarded.url}/who/1?unit=kWh&token=s3cret`, {
        headers: user ? { 'X-Forwarded-User': user } : {},
      });
    const calls = await e2e.receiver.waitFor(2);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(e2e.receiver.calls.map((c) => c.url).sort(), ['/anonymous', '/who']);
    assert.equal(calls.find((c) => c.url === '/who')!.body, 'alice');
    // The dry run judges the same way: the token is not there to read.
    const m = await api<{ HookId: string; Filter?: unknown }[]>(
      guarded.url,
      guarded.token,
      'POST',
      '/_hookd/match',
      { Method: 'GET', Path: '/who/1?unit=kWh&token=s3cret', User: 'alice' },
    );
    assert.equal(m.status, 200, m.text);
    assert.deepEqual(m.body.find((x) => x.HookId === h.Id)?.Filter, { Matched: true, Error: null });
    for (const x of [h, anonymous]) await api(guarded.url, guarded.token, 'DELETE', `/hooks/${x.Id}`);
  });
});
