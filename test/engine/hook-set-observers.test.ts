import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MatchEngine } from '../../src/engine/match-engine.js';
import { BEFORE_COMPLETION, type Hook } from '../../src/hook/hook.js';
import { storedHook } from '../store/store-contract.js';

const hook = (): Hook =>
  storedHook('alice', {
    Methods: ['*'],
    Type: BEFORE_COMPLETION,
    StatusCodeWhiteList: [],
    CallbackMethod: 'POST',
  });

describe('MatchEngine: observers of the hook set', () => {
  it('are told once per change as the caller made it: a replace is a save, a load is one load', () => {
    const engine = new MatchEngine({ accept: () => undefined });
    const told: string[] = [];
    engine.changes.observe({
      saved: (h) => told.push(`saved ${h.Id}`),
      deleted: (id) => told.push(`deleted ${id}`),
      loaded: () => told.push('loaded'),
    });
    const a = hook();
    const b = hook();
    engine.load([a, b]);
    engine.hookSaved({ ...a, State: 'disabled' });
    engine.hookDeleted(b.Id);
    assert.deepEqual(told, ['loaded', `saved ${a.Id}`, `deleted ${b.Id}`]);
    assert.equal(engine.size, 1);
  });
});
