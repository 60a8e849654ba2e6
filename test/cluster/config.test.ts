import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig, redactDatabaseUrl } from '../../src/config/load-config.js';
import { configError } from '../config/config-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'hookd-cluster-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (text: string): string => {
  const f = join(dir, `f-${++n}`);
  writeFileSync(f, text);
  return f;
};
const URL_A = 'postgres://hookd:pa55word@db.example:5432/hookd';
const URL_B = 'postgresql://other@db2.example/hookd?sslmode=require';

describe('databaseUrl and cluster.leaseMs', () => {
  it('are absent / 10 s by default: the SQLite store in the data dir', () => {
    const cfg = loadConfig({ env: {} });
    assert.equal(cfg.databaseUrl, undefined);
    assert.equal(cfg.clusterLeaseMs, 10_000);
  });

  it('come from flags over HOOKD_* over the config file', () => {
    const f = file(JSON.stringify({ databaseUrl: URL_A, cluster: { leaseMs: 3000 } }));
    assert.equal(loadConfig({ env: {}, flags: { config: f } }).databaseUrl, URL_A);
    assert.equal(loadConfig({ env: {}, flags: { config: f } }).clusterLeaseMs, 3000);
    const env = { HOOKD_CONFIG: f, HOOKD_DATABASE_URL: URL_B, HOOKD_CLUSTER_LEASE_MS: '4000' };
    assert.equal(loadConfig({ env }).databaseUrl, URL_B);
    assert.equal(loadConfig({ env }).clusterLeaseMs, 4000);
    const flagged = loadConfig({ env, flags: { databaseUrl: URL_A, clusterLeaseMs: 5000 } });
    assert.equal(flagged.databaseUrl, URL_A);
    assert.equal(flagged.clusterLeaseMs, 5000);
  });

  it('HOOKD_DATABASE_URL_FILE reads the URL from a credential file (systemd LoadCredential)', () => {
    const f = file(`${URL_A}\n`);
    assert.equal(loadConfig({ env: { HOOKD_DATABASE_URL_FILE: f } }).databaseUrl, URL_A);
    assert.equal(
      loadConfig({ env: { HOOKD_DATABASE_URL_FILE: f }, flags: { databaseUrl: URL_B } }).databaseUrl,
      URL_B,
      'a flag still wins',
    );
  });

  it('HOOKD_DATABASE_URL_FILE problems are named without showing the secret', () => {
    assert.match(
      configError(() => loadConfig({ env: { HOOKD_DATABASE_URL_FILE: join(dir, 'missing') } })),
      /HOOKD_DATABASE_URL_FILE: cannot read .*missing: ENOENT/,
    );
    assert.match(
      configError(() => loadConfig({ env: { HOOKD_DATABASE_URL_FILE: file('\n') } })),
      /is empty/,
    );
    assert.match(
      configError(() =>
        loadConfig({ env: { HOOKD_DATABASE_URL_FILE: file(URL_A), HOOKD_DATABASE_URL: URL_B } }),
      ),
      /not both/,
    );
  });

  it('refuses what is not a postgres:// URL, naming the source but never the value', () => {
    for (const bad of ['mysql://root:topsecret@db/x', 'not a url topsecret', 'http://u:topsecret@h/db']) {
      const msg = configError(() => loadConfig({ env: { HOOKD_DATABASE_URL: bad } }));
      assert.match(msg, /^HOOKD_DATABASE_URL: must be a/);
      assert.ok(!msg.includes('topsecret'), msg);
    }
    const f = file(JSON.stringify({ databaseUrl: 42 }));
    assert.match(
      configError(() => loadConfig({ env: {}, flags: { config: f } })),
      /databaseUrl: must be a string/,
    );
  });

  it('a lease outside 1 s to 10 min is refused', () => {
    assert.match(
      configError(() => loadConfig({ env: { HOOKD_CLUSTER_LEASE_MS: '500' } })),
      /HOOKD_CLUSTER_LEASE_MS: must be a whole number from 1000 to 600000/,
    );
  });

  it('redactDatabaseUrl hides the password and password-like parameters', () => {
    assert.equal(redactDatabaseUrl(URL_A), 'postgres://hookd:***@db.example:5432/hookd');
    assert.equal(
      redactDatabaseUrl('postgres://h/db?password=x&sslmode=require'),
      'postgres://h/db?password=***&sslmode=require',
    );
    assert.equal(redactDatabaseUrl(URL_B), URL_B);
    assert.equal(redactDatabaseUrl('garbage with secret'), '(not a URL)');
  });
});
