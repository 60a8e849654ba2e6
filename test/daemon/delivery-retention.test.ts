import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/load-config.js';
import { deliveryOptions } from '../../src/daemon/delivery-options.js';
import { DEFAULT_RETENTION } from '../../src/delivery/delivery-log.js';

// --delivery-retention: how long the daemon's delivery log keeps finished deliveries.

const load = (env: NodeJS.ProcessEnv, flags: Record<string, unknown> = {}) =>
  loadConfig({ env, flags: { dataDir: '/tmp/hookd-retention', ...flags } });

describe('--delivery-retention', () => {
  it('by default the daemon keeps what the pipeline keeps on its own: 7 days', () => {
    assert.equal(deliveryOptions(load({})).retention.maxAgeMs, DEFAULT_RETENTION.maxAgeMs);
  });

  it('reaches the delivery log from the flag, HOOKD_DELIVERY_RETENTION and seconds', () => {
    assert.equal(
      deliveryOptions(load({}, { deliveryRetentionMs: '90d' })).retention.maxAgeMs,
      90 * 86_400_000,
    );
    assert.equal(
      deliveryOptions(load({ HOOKD_DELIVERY_RETENTION: '12h' })).retention.maxAgeMs,
      12 * 3_600_000,
    );
    assert.equal(deliveryOptions(load({ HOOKD_DELIVERY_RETENTION: '3600' })).retention.maxAgeMs, 3_600_000);
  });

  it('refuses a duration out of range or unreadable, naming the source and the rule', () => {
    for (const bad of ['30s', '3651d', 'forever', '-1d']) {
      assert.throws(
        () => load({ HOOKD_DELIVERY_RETENTION: bad }),
        (e: unknown) =>
          e instanceof ConfigError &&
          /^HOOKD_DELIVERY_RETENTION: must be seconds or a duration like 12h, 7d, 90d \(from 1m to 3650d\)$/.test(
            e.message,
          ),
        bad,
      );
    }
  });
});
