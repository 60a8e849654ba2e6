import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/load-config.js';

describe('the workers option', () => {
  it('is 1 unless set, takes a number or auto (the usable cores)', () => {
    assert.equal(loadConfig({ env: {}, flags: {} }).workers, 1);
    assert.equal(loadConfig({ env: { HOOKD_WORKERS: '3' }, flags: {} }).workers, 3);
    assert.equal(loadConfig({ env: { HOOKD_WORKERS: 'auto' }, flags: {} }).workers, availableParallelism());
  });

  it('names the key and the rule when the value is bad', () => {
    for (const bad of ['0', 'many', '1000']) {
      assert.throws(
        () => loadConfig({ env: { HOOKD_WORKERS: bad }, flags: {} }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.problems.some((p) => /WORKERS: must be a whole number from 1 to 256, or auto/.test(p)),
        bad,
      );
    }
  });
});
