import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';
import { addUser } from '../helpers/servers.js';
import { cleanEnv, hookctlInProcess as hookctl } from './helpers.js';

// `hookctl portal-link USER`: the URL alone on stdout, one that opens once; problems named.

describe('hookctl portal-link', { timeout: 60_000 }, () => {
  let d: TestDaemon;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    d = await startHookd();
    await addUser(d, 'alice');
    env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
  });
  after(async () => d?.close());

  it('prints a one-time link on the console listener; --read-only and --scope go with it', async () => {
    const r = await hookctl(
      ['portal-link', 'alice', '--ttl', '2h', '--read-only', '--scope', 'live,secrets'],
      {
        env,
      },
    );
    assert.equal(r.code, 0, r.stderr);
    const url = r.stdout.trim();
    assert.match(url, new RegExp(`^${d.consoleUrl}/_hookd/portal/open/[A-Za-z0-9_-]{43}$`));
    assert.match(r.stderr, /one-time portal link for alice \(read-only\)/);
    assert.equal((await fetch(url, { redirect: 'manual' })).status, 303);
    assert.equal((await fetch(url, { redirect: 'manual' })).status, 410);
    const json = await hookctl(['portal-link', 'alice', '-o', 'json'], { env });
    const link = JSON.parse(json.stdout) as { Scopes: string[]; ReadOnly: boolean };
    assert.equal(link.ReadOnly, false);
    assert.equal(link.Scopes.length, 5);
  });

  it('names the field of a bad --ttl or --scope, and an unknown user', async () => {
    const ttl = await hookctl(['portal-link', 'alice', '--ttl', '3d'], { env });
    assert.notEqual(ttl.code, 0);
    assert.match(ttl.stderr, /Ttl/);
    assert.match(ttl.stderr, /24h/);
    const scope = await hookctl(['portal-link', 'alice', '--scope', 'users'], { env });
    assert.match(scope.stderr, /Scopes.*not a portal scope/);
    const nobody = await hookctl(['portal-link', 'nobody'], { env });
    assert.notEqual(nobody.code, 0);
    assert.match(nobody.stderr, /no user "nobody"/);
  });
});
