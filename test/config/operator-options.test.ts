import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load-config.js';
import { configError } from './config-helpers.js';

// Operator options: idempotency.ttl, tracing.enabled, tracing.endpoint (flag, HOOKD_*, file).

const dir = mkdtempSync(join(tmpdir(), 'hookd-config16-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (doc: unknown): string => {
  const f = join(dir, `c${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(f, JSON.stringify(doc));
  return f;
};

describe('idempotency and tracing options', () => {
  it('defaults: keys kept 24 h, tracing left to OTEL_*', () => {
    const cfg = loadConfig({ env: {} });
    assert.equal(cfg.idempotencyTtlMs, 24 * 3600 * 1000);
    assert.equal(cfg.tracing, undefined);
    assert.equal(cfg.tracingEndpoint, undefined);
  });

  it('reads durations and switches from the environment and the file', () => {
    const env = loadConfig({
      env: {
        HOOKD_IDEMPOTENCY_TTL: '30m',
        HOOKD_TRACING: 'on',
        HOOKD_TRACING_ENDPOINT: 'http://c:4318/v1/traces',
      },
    });
    assert.equal(env.idempotencyTtlMs, 30 * 60 * 1000);
    assert.equal(env.tracing, true);
    assert.equal(env.tracingEndpoint, 'http://c:4318/v1/traces');
    const f = loadConfig({
      env: {},
      flags: { config: file({ idempotency: { ttl: 3600 }, tracing: { enabled: false } }) },
    });
    assert.equal(f.idempotencyTtlMs, 3600 * 1000);
    assert.equal(f.tracing, false);
    assert.equal(loadConfig({ env: { HOOKD_IDEMPOTENCY_TTL: '7d' } }).idempotencyTtlMs, 7 * 86400 * 1000);
  });

  it('refuses bad values naming the source and the rule', () => {
    assert.match(
      configError(() => loadConfig({ env: { HOOKD_IDEMPOTENCY_TTL: 'soon' } })),
      /HOOKD_IDEMPOTENCY_TTL.*duration/,
    );
    assert.match(
      configError(() => loadConfig({ env: { HOOKD_IDEMPOTENCY_TTL: '31d' } })),
      /from 1s to 30d/,
    );
    assert.match(
      configError(() => loadConfig({ env: { HOOKD_TRACING: 'maybe' } })),
      /HOOKD_TRACING.*true or false/,
    );
    assert.match(
      configError(() => loadConfig({ env: { HOOKD_TRACING_ENDPOINT: 'collector:4318' } })),
      /HOOKD_TRACING_ENDPOINT.*http/,
    );
  });
});
