import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FiredEvent } from '../../src/engine/fired-event.js';
import { MatchEngine } from '../../src/engine/match-engine.js';
import { AFTER_COMPLETION, BEFORE_COMPLETION, type Hook } from '../../src/hook/hook.js';
import { storedHook } from '../store/store-contract.js';

/** The contract suite's stored hook, as a BeforeCompletion hook for any method and status. */
const hook = (over: Partial<Hook> = {}): Hook =>
  storedHook('alice', {
    Methods: ['*'],
    Type: BEFORE_COMPLETION,
    StatusCodeWhiteList: [],
    CallbackMethod: 'POST',
    CallbackContentMediaType: 'application/json',
    Headers: { 'X-Tenant': 'acme' },
    ...over,
  });

const engineWithSink = () => {
  const fired: FiredEvent[] = [];
  const engine = new MatchEngine({ accept: (events) => fired.push(...events) });
  const fire = (path: string, statusCode = 200) => {
    fired.length = 0;
    engine.fire('before', { method: 'GET', path, uri: () => `http://h${path}` });
    engine.fire('after', { method: 'GET', path, uri: () => `http://h${path}`, statusCode });
    return fired.map((e) => e.hookId);
  };
  return { engine, fire };
};

describe('MatchEngine: the set of hooks', () => {
  it('knows active and disabled hooks; only active ones fire', () => {
    const { engine, fire } = engineWithSink();
    const before = hook();
    const after = hook({ Type: AFTER_COMPLETION });
    const off = hook({ State: 'disabled' });
    engine.load([before, after, off]);
    assert.equal(engine.size, 3);
    assert.deepEqual([...engine.ids()].sort(), [before.Id, after.Id, off.Id].sort());
    assert.equal(engine.get(off.Id), off);
    assert.equal(engine.isActive(before.Id), true);
    assert.equal(engine.isActive(after.Id), true);
    assert.equal(engine.isActive(off.Id), false);
    assert.equal(engine.isActive('hk_unknown'), false);
    assert.deepEqual(fire('/a/x'), [before.Id, after.Id]);

    // Re-enabling (a replace) and disabling move a hook between the index and the disabled set.
    engine.hookSaved({ ...off, State: 'active' });
    engine.hookSaved({ ...before, State: 'disabled' });
    assert.equal(engine.size, 3);
    assert.equal(engine.isActive(off.Id), true);
    assert.equal(engine.isActive(before.Id), false);
    assert.equal(engine.get(before.Id)?.State, 'disabled');
    assert.deepEqual(fire('/a/x'), [off.Id, after.Id]);
  });

  it('moves a hook between phases when its Type changes, and forgets deleted ones', () => {
    const { engine, fire } = engineWithSink();
    const h = hook();
    engine.hookSaved(h);
    engine.hookSaved({ ...h, Type: AFTER_COMPLETION });
    assert.equal(engine.size, 1);
    assert.equal(engine.get(h.Id)?.Type, AFTER_COMPLETION);
    assert.deepEqual(fire('/a/x'), [h.Id]);
    engine.hookDeleted(h.Id);
    engine.hookDeleted(h.Id);
    assert.equal(engine.size, 0);
    assert.equal(engine.get(h.Id), undefined);
    assert.deepEqual([...engine.ids()], []);
    assert.deepEqual(fire('/a/x'), []);
  });

  it('load replaces everything, and a duplicate Id keeps the last one', () => {
    const { engine, fire } = engineWithSink();
    const old = hook();
    engine.load([old]);
    const a = hook();
    engine.load([a, { ...a, PathPattern: '/b/(*)' }]);
    assert.equal(engine.size, 1);
    assert.equal(engine.get(old.Id), undefined);
    assert.deepEqual(fire('/a/x'), []);
    assert.deepEqual(fire('/b/x'), [a.Id]);
  });

  it('renders each callback with its own copy of the shared headers', () => {
    const fired: FiredEvent[] = [];
    const engine = new MatchEngine({ accept: (events) => fired.push(...events) });
    const a = hook({ Headers: {} });
    const b = hook({ Headers: {} });
    engine.load([a, b]);
    assert.equal(engine.get(a.Id)?.Headers, engine.get(b.Id)?.Headers);
    engine.fire('before', { method: 'GET', path: '/a/x', uri: () => 'http://h/a/x' });
    assert.equal(fired.length, 2);
    fired[0]!.request.headers['x-added'] = '1';
    assert.deepEqual(fired[1]!.request.headers, { 'content-type': 'application/json' });
    assert.deepEqual(engine.get(b.Id)?.Headers, {});
  });

  it('compiles a template when its hook fires: one over the body limit is kept and reported then', () => {
    const fired: FiredEvent[] = [];
    const refused: string[] = [];
    const engine = new MatchEngine(
      { accept: (events) => fired.push(...events) },
      { maxBodyBytes: 16, onRenderError: (h) => refused.push(h.Id) },
    );
    const big = hook({ CallbackContent: `{"text":"${'x'.repeat(64)}","path":"$1"}` });
    const small = hook({ CallbackContent: '{"p":"$1"}' });
    engine.load([big, small]);
    assert.equal(engine.size, 2);
    assert.deepEqual(refused, []);
    engine.fire('before', { method: 'GET', path: '/a/x', uri: () => 'http://h/a/x' });
    assert.deepEqual(refused, [big.Id]);
    assert.deepEqual(
      fired.map((e) => [e.hookId, e.request.body]),
      [[small.Id, '{"p":"x"}']],
    );
  });
});

describe("MatchEngine: the request's user (lazy)", () => {
  const setup = () => {
    const fired: FiredEvent[] = [];
    const engine = new MatchEngine({ accept: (events) => fired.push(...events) });
    engine.load([
      hook({ PathPattern: '/watched', CallbackContent: '{"u":"$REQUEST_USER"}' }),
      hook({ PathPattern: '/watched', Type: AFTER_COMPLETION, CallbackContent: '{"u":"$REQUEST_USER"}' }),
      hook({ PathPattern: '/only-posts', Methods: ['POST'] }),
    ]);
    return { engine, fired };
  };

  it('is not resolved when no hook matches (path or method)', async () => {
    const { engine, fired } = setup();
    let asked = 0;
    const requestUser = async () => {
      asked++;
      return 'alice';
    };
    assert.equal(engine.fire('before', { method: 'GET', path: '/other', uri: () => 'u', requestUser }), 0);
    assert.equal(
      engine.fire('before', { method: 'GET', path: '/only-posts', uri: () => 'u', requestUser }),
      0,
    );
    await new Promise((r) => setImmediate(r));
    assert.equal(asked, 0);
    assert.equal(fired.length, 0);
  });

  it('fires once the user is known, with the firing time and URI of the request', async () => {
    const { engine, fired } = setup();
    let resolve!: (u: string | undefined) => void;
    const pending = new Promise<string | undefined>((r) => {
      resolve = r;
    });
    let uriReads = 0;
    const matched = engine.fire('before', {
      method: 'GET',
      path: '/watched/1',
      uri: () => {
        uriReads++;
        return 'http://h/watched/1?x';
      },
      requestUser: () => pending,
    });
    assert.equal(matched, 1);
    assert.equal(uriReads, 1, 'the URI is read at match time');
    assert.equal(fired.length, 0, 'nothing before the user is known');
    resolve('alice');
    await pending;
    await new Promise((r) => setImmediate(r));
    assert.equal(fired.length, 1);
    assert.equal(JSON.parse(fired[0]!.request.body!).u, 'alice');
    assert.equal(fired[0]!.trigger.user, 'alice');
  });

  it('an unresolved user (undefined or a rejection) is anonymous; a known one needs no resolver', async () => {
    const { engine, fired } = setup();
    engine.fire('before', {
      method: 'GET',
      path: '/watched',
      uri: () => 'u',
      requestUser: async () => undefined,
    });
    engine.fire('before', {
      method: 'GET',
      path: '/watched',
      uri: () => 'u',
      requestUser: () => Promise.reject(new Error('provider down')),
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(fired.length, 2);
    for (const e of fired) {
      assert.equal(JSON.parse(e.request.body!).u, '');
      assert.equal('user' in e.trigger, false);
    }
    fired.length = 0;
    assert.equal(
      engine.fire('after', { method: 'GET', path: '/watched', uri: () => 'u', statusCode: 200, user: 'bob' }),
      1,
    );
    assert.equal(fired.length, 1, 'fired synchronously');
    assert.equal(fired[0]!.trigger.user, 'bob');
  });

  it('the dry run renders the given user', async () => {
    const { engine } = setup();
    const [p] = await engine.preview('alice', {
      method: 'GET',
      path: '/watched',
      uri: () => 'u',
      user: 'carol',
    });
    assert.equal(JSON.parse(p!.request.body!).u, 'carol');
  });
});

describe('MatchEngine: the dry run of a hook not saved', () => {
  const trigger = { method: 'POST', path: '/a/x', uri: () => 'http://h/a/x', statusCode: 201 };

  it('judges the draft under the engine’s own Transform limits, on its threads, keeping nothing', async () => {
    const engine = new MatchEngine(
      { accept: () => undefined },
      { code: { transform: { limits: { timeMs: 30 } } } },
    );
    try {
      const saved = hook({ Id: 'hk_saved', PathPattern: '/a/(*)' });
      engine.load([saved]);
      const draft = hook({
        Id: '(this form)',
        Type: AFTER_COMPLETION,
        PathPattern: '/a/(*)',
        Filter: 'request.method == "POST"',
        Transform: 'function transform(e) { while (true) {} }',
      });
      const [p, ...rest] = await engine.previewDraft(draft, trigger);
      assert.equal(rest.length, 0, 'the saved hook is not part of the draft’s dry run');
      assert.equal(p!.hook, draft);
      assert.deepEqual(p!.captures, ['x']);
      assert.deepEqual(p!.filter, { matched: true });
      assert.match(p!.transform?.error ?? '', /exceeded 30 ms/);
      // Nothing of the draft stays: not in the set, not a body reader, no filter error counted.
      assert.equal(engine.size, 1);
      assert.equal(engine.get('(this form)'), undefined);
      assert.equal(engine.code.anyReader, false);
      assert.equal(engine.code.filterErrors, 0);
      assert.deepEqual(
        (await engine.preview('alice', trigger)).map((pv) => pv.hook.Id),
        ['hk_saved'],
      );
    } finally {
      await engine.code.close();
    }
  });

  it('a draft whose filter does not match, or whose method or status does not fire, shows so', async () => {
    const engine = new MatchEngine({ accept: () => undefined });
    try {
      const base = { Type: AFTER_COMPLETION, PathPattern: '/a/(*)' } as const;
      const [p] = await engine.previewDraft(hook({ ...base, Filter: 'request.method == "GET"' }), trigger);
      assert.deepEqual(p!.filter, { matched: false });
      assert.equal(p!.transform, undefined);
      assert.deepEqual(await engine.previewDraft(hook({ ...base, Methods: ['GET'] }), trigger), []);
      assert.deepEqual(await engine.previewDraft(hook({ ...base, StatusCodeBlackList: [201] }), trigger), []);
      assert.deepEqual(await engine.previewDraft(hook({ ...base, PathPattern: '/b/(*)' }), trigger), []);
      const [before] = await engine.previewDraft(hook({ PathPattern: '/a/(*)' }), trigger);
      assert.equal(before!.request.url.length > 0, true);
    } finally {
      await engine.code.close();
    }
  });
});
