import assert from 'node:assert/strict';
import { HookdError } from '../../src/client/index.js';

/** The HookdError a call rejects with. */
export async function failure(p: Promise<unknown>): Promise<HookdError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof HookdError, `a HookdError, not ${String(e)}`);
    return e;
  }
  assert.fail('the call succeeded');
}
