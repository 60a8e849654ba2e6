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
});
