import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load-config.js';
import { configError } from './config-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'hookd-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('auto-disable options', () => {
  it('are absent by default (the daemon then uses 5 days and 10 attempts)', () => {
    const cfg = loadConfig({ env: {} });
    assert.equal(cfg.autoDisableAfterMs, undefined);
    assert.equal(cfg.autoDisableFailures, undefined);
  });

  it('come from flags, HOOKD_* variables and the config file, as durations or seconds; off turns it off', () => {
    assert.equal(
      loadConfig({ env: {}, flags: { autoDisableAfterMs: '12h' } }).autoDisableAfterMs,
      12 * 3600_000,
    );
    assert.equal(loadConfig({ env: { HOOKD_AUTO_DISABLE_AFTER: '90' } }).autoDisableAfterMs, 90_000);
    assert.equal(loadConfig({ env: { HOOKD_AUTO_DISABLE_AFTER: 'off' } }).autoDisableAfterMs, 0);
    assert.equal(loadConfig({ env: { HOOKD_AUTO_DISABLE_FAILURES: '25' } }).autoDisableFailures, 25);
    const file = join(dir, 'c.json');
    writeFileSync(file, JSON.stringify({ autoDisable: { after: '5d', failures: 3 } }));
    const cfg = loadConfig({ env: {}, flags: { config: file } });
    assert.equal(cfg.autoDisableAfterMs, 5 * 86_400_000);
    assert.equal(cfg.autoDisableFailures, 3);
  });

  it('refuse what is not a duration or a count, naming the key and the rule', () => {
    assert.match(
      configError(() => loadConfig({ env: { HOOKD_AUTO_DISABLE_AFTER: 'soon' } })),
      /HOOKD_AUTO_DISABLE_AFTER.*duration like/,
    );
    assert.match(
      configError(() => loadConfig({ env: { HOOKD_AUTO_DISABLE_FAILURES: '0' } })),
      /HOOKD_AUTO_DISABLE_FAILURES.*whole number from 1/,
    );
  });
});
