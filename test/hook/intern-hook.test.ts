import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Hook } from '../../src/hook/hook.js';
import { internHook } from '../../src/hook/intern-hook.js';

const hook = (over: Partial<Hook> = {}): Hook => ({
  Id: 'hk_01M81VAB2FTPKZGCMDPJ9H3SMMCQY1',
  Owner: 'alice',
  PathPattern: '/a/(*)',
  Callback: 'https://example.com/x',
  Methods: ['GET', 'PUT'],
  Type: 1,
  StatusCodeBlackList: [],
  StatusCodeWhiteList: [200, 204],
  CallbackMethod: 'POST',
  CallbackContentMediaType: 'application/json',
  Headers: {},
  Persist: true,
  Modified: '2026-01-01T00:00:00.000+00:00',
  State: 'active',
  ...over,
});

/** The same hook as a fresh parse gives it: no value shared with any other object. */
const parsed = (h: Hook): Hook => JSON.parse(JSON.stringify(h)) as Hook;

describe('internHook', () => {
  it('shares equal lists and empty headers between hooks, frozen', () => {
    const a = internHook(parsed(hook()));
    const b = internHook(parsed(hook({ Id: 'hk_other' })));
    assert.equal(a.Methods, b.Methods);
    assert.equal(a.StatusCodeWhiteList, b.StatusCodeWhiteList);
    assert.equal(a.StatusCodeBlackList, b.StatusCodeBlackList);
    assert.equal(a.Headers, b.Headers);
    for (const shared of [a.Methods, a.StatusCodeWhiteList, a.StatusCodeBlackList, a.Headers])
      assert.ok(Object.isFrozen(shared));
    assert.throws(() => a.Methods.push('POST'), TypeError);
    assert.throws(() => {
      a.Headers['X-Added'] = '1';
    }, TypeError);
  });

  it('changes nothing a reader can see: same hook, same fields, same JSON', () => {
    for (const original of [
      hook(),
      hook({ RetrySchedule: [0, 5, 60], CallbackContent: '$1', Headers: { 'X-Tenant': 'acme' } }),
      hook({ Methods: ['*'], StatusCodeWhiteList: [] }),
    ]) {
      const copy = parsed(original);
      assert.equal(internHook(copy), copy);
      assert.deepEqual(copy, original);
      assert.equal(JSON.stringify(copy), JSON.stringify(original));
    }
    assert.ok(!('RetrySchedule' in internHook(parsed(hook()))));
  });

  it('keeps different lists apart, element order included', () => {
    const a = internHook(parsed(hook({ Methods: ['GET', 'PUT'] })));
    const b = internHook(parsed(hook({ Methods: ['PUT', 'GET'] })));
    const c = internHook(parsed(hook({ Methods: ['GET PUT'] })));
    assert.deepEqual(b.Methods, ['PUT', 'GET']);
    assert.notEqual(a.Methods, b.Methods);
    assert.deepEqual(c.Methods, ['GET PUT']);
    assert.notEqual(a.Methods, c.Methods);
    // Status lists and retry schedules are not confused with each other either.
    const d = internHook(parsed(hook({ StatusCodeWhiteList: [5], RetrySchedule: [5] })));
    assert.notEqual(d.StatusCodeWhiteList as unknown, d.RetrySchedule as unknown);
  });

  it('leaves headers with entries to their hook', () => {
    const headers = { 'X-Tenant': 'acme' };
    const h = internHook(hook({ Headers: headers }));
    assert.equal(h.Headers, headers);
    assert.ok(!Object.isFrozen(h.Headers));
  });

  it('is idempotent', () => {
    const h = internHook(parsed(hook()));
    const { Methods, Headers } = h;
    internHook(h);
    assert.equal(h.Methods, Methods);
    assert.equal(h.Headers, Headers);
  });
});
