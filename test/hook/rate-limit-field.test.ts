import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HookdError } from '../../src/errors/catalog.js';
import { validateHook } from '../../src/hook/validate-hook.js';

// The hook's optional RateLimit field: {PerSecond, Burst?}; errors name the field and the rule.

const ok = { PathPattern: '/orders/(*)', Callback: 'https://receiver.example/cb', Methods: ['POST'] };

async function fieldsOf(doc: unknown): Promise<Record<string, string>> {
  try {
    await validateHook(doc);
  } catch (err) {
    assert.ok(err instanceof HookdError);
    assert.equal(err.code, 'VALIDATION_FAILED');
    return Object.fromEntries(err.errors!.map((e) => [e.field, e.message]));
  }
  assert.fail('expected a validation error');
}

describe('hook field RateLimit', () => {
  it('is optional, and Burst defaults to one second of the rate', async () => {
    assert.equal((await validateHook(ok)).RateLimit, undefined);
    assert.deepEqual((await validateHook({ ...ok, RateLimit: { PerSecond: 10 } })).RateLimit, {
      PerSecond: 10,
      Burst: 10,
    });
    assert.deepEqual((await validateHook({ ...ok, RateLimit: { PerSecond: 0.5 } })).RateLimit, {
      PerSecond: 0.5,
      Burst: 1,
    });
    assert.deepEqual((await validateHook({ ...ok, RateLimit: { PerSecond: 2.5, Burst: 7 } })).RateLimit, {
      PerSecond: 2.5,
      Burst: 7,
    });
  });

  it('refuses bad values naming the field and the rule', async () => {
    assert.match(
      (await fieldsOf({ ...ok, RateLimit: { PerSecond: 0 } }))['RateLimit.PerSecond']!,
      /per second from/,
    );
    assert.match(
      (await fieldsOf({ ...ok, RateLimit: { PerSecond: 20_000 } }))['RateLimit.PerSecond']!,
      /to 10000/,
    );
    assert.match(
      (await fieldsOf({ ...ok, RateLimit: { PerSecond: 5, Burst: 0 } }))['RateLimit.Burst']!,
      /whole number of callbacks from 1/,
    );
    assert.match(
      (await fieldsOf({ ...ok, RateLimit: { PerSecond: 5, Burst: 1.5 } }))['RateLimit.Burst']!,
      /integer/,
    );
    assert.equal((await fieldsOf({ ...ok, RateLimit: {} }))['RateLimit.PerSecond'], 'is required');
    assert.match(
      (await fieldsOf({ ...ok, RateLimit: { PerSecond: 1, Brust: 2 } }))['RateLimit.Brust']!,
      /did you mean `Burst`/,
    );
    assert.match((await fieldsOf({ ...ok, RateLimit: 10 })).RateLimit!, /must be an object/);
  });
});
