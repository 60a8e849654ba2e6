import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { api } from '../helpers/hookd.js';
import { proxyE2e } from '../helpers/proxy-e2e.js';
import { until } from '../helpers/until.js';

// Transforms through a real hookd in front of a real upstream, and the dry run and the report
// API with request content. Hostile transforms fail their own deliveries, saying why, while a
// healthy hook on the same requests keeps delivering.

const e2e = proxyE2e();

interface Delivery {
  Status: string;
  LastError: string | null;
  Request: { Body: string | null };
}

const deliveriesOf = (id: string) => e2e.deliveriesOf<Delivery>(id);

describe('Transform end to end', () => {
  it('builds a chat message from the JSON the upstream answered, with a header; skip sends nothing', async () => {
    const chat = await e2e.hook({
      PathPattern: '/repositories/(*)/data',
      Methods: ['PUT'],
      Type: 1,
      Callback: `${e2e.receiver.url}/chat`,
      Filter: 'response.status == 200',
      Transform: `function transform(event) {
  const answer = event.response.body;
  if (answer.bodyBytes === 0) return { "skip": true };
  return {
    payload: { text: "Repository " + event.captures[0] + ": " + answer.bodyBytes + " bytes written by " + event.request.method },
    headers: { "X-Chat-Channel": "alerts" },
  };
}`,
    });
    e2e.receiver.reset();
    await fetch(`${e2e.d.url}/repositories/r1/data`, { method: 'PUT', body: 'abcd' }).then((r) =>
      r.arrayBuffer(),
    );
    await fetch(`${e2e.d.url}/repositories/r2/data`, { method: 'PUT' }).then((r) => r.arrayBuffer());
    const [call] = await e2e.receiver.waitFor(1);
    assert.deepEqual(JSON.parse(call!.body), { text: 'Repository r1: 4 bytes written by PUT' });
    assert.equal(call!.headers['x-chat-channel'], 'alerts');
    assert.equal(call!.headers['content-type'], 'application/json');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(e2e.receiver.calls.length, 1, 'the skipped one sent nothing');
    // What was recorded is what was sent: a redelivery sends the transformed payload again.
    const [rec] = await deliveriesOf(chat.Id);
    assert.equal(rec!.Request.Body, call!.body);
    await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${chat.Id}`);
  });

  it('hostile transforms fail their deliveries with the cause; a healthy hook keeps delivering', async () => {
    const hostile: [string, string, RegExp][] = [
      ['while', 'while (true) {}', /^Transform: exceeded 50 ms$/],
      [
        'alloc',
        'const a = []; for (;;) a.push([a.length, {}]);',
        /^Transform: exceeded (the memory limit of 16 MiB|50 ms)$/,
      ],
      [
        'recursion',
        'function f(n) { return f(n + 1) + 1; } return f(0);',
        /^Transform: (InternalError: stack overflow|exceeded 50 ms)/,
      ],
      [
        'big',
        'return { payload: "x".repeat(10 * 1024 * 1024) };',
        /^Transform: (RangeError: the returned object is over 1 MiB|exceeded)/,
      ],
      [
        'typeerror',
        '\n  return { payload: event.nothing.x };',
        /^Transform: (TypeError: cannot read property 'x' of undefined at line 3|exceeded 50 ms)$/,
      ],
      ['throw', 'throw new Error("bad reading");', /^Transform: (Error: bad reading|exceeded 50 ms)/],
      ['require', 'return { payload: require("fs") };', /ReferenceError|exceeded 50 ms/],
      ['process', 'return { payload: process.env };', /ReferenceError|exceeded 50 ms/],
      ['fetch', 'globalThis.fetch("http://127.0.0.1:1/"); return {};', /TypeError|exceeded 50 ms/],
      ['import', 'return import("node:fs");', /promise|exceeded 50 ms/],
      [
        'this',
        'return { payload: Function("return this")().process.mainModule };',
        /TypeError|exceeded 50 ms/,
      ],
    ];
    const healthy = await e2e.hook({
      PathPattern: '/hostile/*',
      Methods: ['GET'],
      Callback: `${e2e.receiver.url}/healthy`,
    });
    // A healthy hook with a transform of its own: the hostile ones must not hold its runs up.
    const shaped = await e2e.hook({
      PathPattern: '/hostile/(*)',
      Methods: ['GET'],
      Callback: `${e2e.receiver.url}/shaped`,
      Transform: 'function transform(event) { return { payload: { at: event.captures[0] } }; }',
    });
    const HEALTHY = ['/healthy', '/shaped'];
    // Each healthy hook's latency, request sent to callback arrived, alone and then beside them.
    const latency = async (tag: string): Promise<number[]> => {
      const samples: number[][] = [[], []];
      for (let i = 0; i < 7; i++) {
        e2e.receiver.reset();
        const sent = performance.now();
        const r = await fetch(`${e2e.d.url}/hostile/${tag}${i}`);
        assert.equal(r.status, 200, 'the proxied request is answered');
        await r.arrayBuffer();
        for (const [k, url] of HEALTHY.entries()) {
          const call = await until(`${tag}${i}: the callback to ${url}`, () =>
            e2e.receiver.calls.find((c) => c.url === url),
          );
          samples[k]!.push(call.arrivedAt - sent);
        }
      }
      return samples.map((s) => s.sort((a, b) => a - b)[3]!);
    };
    const alone = await latency('alone');
    const hooks: { Id: string }[] = [];
    for (const [name, body] of hostile)
      hooks.push(
        await e2e.hook({
          PathPattern: '/hostile/*',
          Methods: ['GET'],
          Callback: `${e2e.receiver.url}/hostile/${name}`,
          Transform: `function transform(event) {\n${body}\n}`,
        }),
      );
    const beside = await latency('beside');
    // Held up by even one runaway transform, a healthy callback would wait out its 50 ms limit:
    // the bound stays below that above the healthy hook's own latency, with room for a busy machine.
    for (const [k, url] of HEALTHY.entries())
      assert.ok(
        beside[k]! <= alone[k]! + 40 && beside[k]! < 100,
        `${url}: median latency ${beside[k]!.toFixed(1)} ms beside them, ${alone[k]!.toFixed(1)} ms alone`,
      );
    assert.ok(
      e2e.receiver.calls.every((c) => HEALTHY.includes(c.url)),
      'only the healthy hooks delivered',
    );
    assert.deepEqual(JSON.parse(e2e.receiver.calls.find((c) => c.url === '/shaped')!.body), {
      at: 'beside6',
    });
    for (const [i, [name, , want]] of hostile.entries()) {
      const list = await until(
        `${name}: 7 failed deliveries`,
        async () => {
          const l = await deliveriesOf(hooks[i]!.Id);
          return l.length === 7 && l;
        },
        { ms: 60_000 },
      );
      for (const x of list) {
        assert.equal(x.Status, 'failed', name);
        assert.match(x.LastError ?? '', want, name);
      }
    }
    // hookd is still serving.
    assert.equal((await fetch(`${e2e.d.url}/hostile/after`)).status, 200);
    for (const h of [...hooks, healthy, shaped])
      await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${h.Id}`);
  });

  it('escape attempts see nothing of the host, no run sees another run or hook, the Callback stays', async () => {
    // Each run says what it sees before it pollutes: the second request must find it all fresh,
    // and so must the other hook, which runs in the same thread between them.
    const probe = `function transform(event) {
  const g = Function("return this")();
  const seen = [typeof require, typeof process, typeof globalThis.fetch, typeof g.process,
    typeof setTimeout, typeof ({}).polluted, typeof globalThis.kept, typeof [].push].join();
  Object.prototype.polluted = event.hook.Id;
  globalThis.kept = event.hook.Id;
  Array.prototype.push = null;
  // The Callback is the hook's: changing the event's copy of it sends nothing elsewhere.
  event.callback.url = "http://127.0.0.1:1/elsewhere";
  return { payload: seen };
}`;
    const a = await e2e.hook({
      PathPattern: '/probe/*',
      Methods: ['GET'],
      Callback: `${e2e.receiver.url}/probe/a`,
      Transform: probe,
    });
    const b = await e2e.hook({
      PathPattern: '/probe/*',
      Methods: ['GET'],
      Callback: `${e2e.receiver.url}/probe/b`,
      Transform: probe,
    });
    e2e.receiver.reset();
    for (let i = 0; i < 2; i++) await fetch(`${e2e.d.url}/probe/${i}`).then((r) => r.arrayBuffer());
    const calls = await e2e.receiver.waitFor(4);
    assert.deepEqual(calls.map((c) => c.url).sort(), ['/probe/a', '/probe/a', '/probe/b', '/probe/b']);
    for (const c of calls)
      assert.equal(
        c.body,
        'undefined,undefined,undefined,undefined,undefined,undefined,undefined,function',
        c.url,
      );
    for (const h of [a, b]) await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${h.Id}`);
  });

  it('a Transform that does not compile is 400 naming Transform with line and column', async () => {
    const r = await api<{ errors: { field: string; message: string; line?: number }[] }>(
      e2e.d.url,
      e2e.d.token,
      'POST',
      '/hooks',
      {
        PathPattern: '/t/*',
        Methods: ['GET'],
        Callback: `${e2e.receiver.url}/t`,
        Transform: 'function transform(event) {\n  return { payload: };\n}',
      },
    );
    assert.equal(r.status, 400);
    const e = r.body.errors.find((x) => x.field === 'Transform');
    assert.ok(e, r.text);
    assert.match(e.message, /^SyntaxError: .* at 2:\d+$/);
    assert.equal(e.line, 2);
  });
});

describe('dry run and report with request content', () => {
  it('/_hookd/match answers Filter {Matched, Error} and Transform {Payload, Headers, Skip, Error} per hook', async () => {
    const f = await e2e.hook({
      PathPattern: '/m/*',
      Methods: ['POST'],
      Callback: `${e2e.receiver.url}/m`,
      Filter: 'request.body.quality == "bad" && request.headers["x-unit"] == "kWh"',
      Transform:
        'function transform(e) { return { payload: { q: e.request.body.quality, id: e.hook.Id }, headers: { "X-Q": "1" } }; }',
    });
    const ask = (extra: Record<string, unknown>) =>
      api<{ HookId: string; Filter?: unknown; Transform?: unknown }[]>(
        e2e.d.url,
        e2e.d.token,
        'POST',
        '/_hookd/match',
        {
          Method: 'POST',
          Path: '/m/1',
          ...extra,
        },
      );
    const hit = await ask({ Headers: { 'X-Unit': 'kWh' }, Body: { quality: 'bad' } });
    assert.equal(hit.status, 200, hit.text);
    const mine = hit.body.find((x) => x.HookId === f.Id)!;
    assert.deepEqual(mine.Filter, { Matched: true, Error: null });
    assert.deepEqual(mine.Transform, {
      Payload: JSON.stringify({ q: 'bad', id: f.Id }),
      Headers: { 'X-Q': '1' },
      Skip: false,
      Error: null,
    });
    // A string body is JSON when the headers say so.
    const text = await ask({
      Headers: { 'X-Unit': 'kWh', 'content-type': 'application/json' },
      Body: '{"quality": "bad"}',
    });
    assert.deepEqual(text.body.find((x) => x.HookId === f.Id)!.Filter, { Matched: true, Error: null });
    const miss = await ask({ Headers: { 'X-Unit': 'MWh' }, Body: { quality: 'bad' } });
    const m = miss.body.find((x) => x.HookId === f.Id)!;
    assert.deepEqual(m.Filter, { Matched: false, Error: null });
    assert.equal(m.Transform, undefined);
    const err = await ask({ Headers: { 'X-Unit': 'kWh' } });
    const e = err.body.find((x) => x.HookId === f.Id)!.Filter as { Matched: boolean; Error: string };
    assert.equal(e.Matched, false);
    assert.match(e.Error, /no such key|not found|null/);
    await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${f.Id}`);
  });

  it('/_hookd/report fires a body filter with Body, and an AfterCompletion one with ResponseBody', async () => {
    const b = await e2e.hook({
      PathPattern: '/r/*',
      Methods: ['POST'],
      Type: 0,
      Callback: `${e2e.receiver.url}/rb`,
      Filter: 'request.body.quality == "bad"',
    });
    const a = await e2e.hook({
      PathPattern: '/r/*',
      Methods: ['POST'],
      Type: 1,
      Callback: `${e2e.receiver.url}/ra`,
      Filter: 'response.body.ok == false && response.headers["x-kind"] == "k"',
    });
    e2e.receiver.reset();
    const rep = async (body: Record<string, unknown>) => {
      const r = await api<{ fired: number }>(e2e.d.url, e2e.d.token, 'POST', '/_hookd/report', {
        Method: 'POST',
        Path: '/r/1',
        ...body,
      });
      assert.equal(r.status, 202, r.text);
      return r.body.fired;
    };
    assert.equal(await rep({ Body: { quality: 'good' } }), 0);
    assert.equal(await rep({ Body: { quality: 'bad' } }), 1);
    assert.equal(
      await rep({
        Phase: 'after',
        StatusCode: 200,
        ResponseHeaders: { 'X-Kind': 'k' },
        ResponseBody: { ok: false },
      }),
      1,
    );
    const bad = await api(e2e.d.url, e2e.d.token, 'POST', '/_hookd/report', {
      Method: 'POST',
      Path: '/r/1',
      Headers: [],
    });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /Headers/);
    const calls = await e2e.receiver.waitFor(2);
    assert.deepEqual(calls.map((c) => c.url).sort(), ['/ra', '/rb']);
    for (const h of [a, b]) await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${h.Id}`);
  });
});
