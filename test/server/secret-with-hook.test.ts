import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { STORE_FILE } from '../../src/daemon/hookd.js';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook } from '../helpers/servers.js';

// A hook's signing secret is created with the hook, in its transaction, so delivery
// never waits on a first-use write (which a full disk would hold up): it is in the store before
// anything fires.

let d: TestDaemon;
before(async () => {
  d = await startHookd();
});
after(async () => {
  await d?.close();
});

describe('signing secrets are created with the hook', () => {
  it('stores the secret when the hook is created, and the API shows that one', async () => {
    const hook = await createHook(d, {
      PathPattern: '/s',
      Methods: ['GET'],
      Callback: 'http://127.0.0.1:9/cb',
    });
    const db = new Database(join(d.dataDir, STORE_FILE), { readonly: true });
    let stored: { secret: string } | undefined;
    try {
      stored = db.prepare('SELECT secret FROM hook_secrets WHERE hook_id = ?').get(hook.Id) as
        | { secret: string }
        | undefined;
    } finally {
      db.close();
    }
    assert.ok(stored, 'the secret row exists right after POST /hooks');
    // Stored sealed (docs/DECISIONS.md "Secrets at rest"): the row never holds the secret itself.
    assert.match(stored.secret, /^hkx1:/);
    const shown = await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${hook.Id}/secret`);
    assert.equal(shown.status, 200);
    assert.match(shown.body.Secret, /^whsec_/);
    assert.ok(!stored.secret.includes(shown.body.Secret.slice('whsec_'.length)));
  });
});
