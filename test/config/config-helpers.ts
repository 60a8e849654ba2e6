import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config/load-config.js';

/** The ConfigError's message, or a failure when loading succeeds or throws something else. */
export function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected a ConfigError, got ${String(e)}`);
    return e.message;
  }
  assert.fail('expected a ConfigError');
}
