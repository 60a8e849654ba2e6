import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Authenticator } from '../../src/auth/authenticator.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { Accounts } from '../../src/users/accounts.js';

/** The store's writes settle in the background; this waits for the one just started. */
const settle = () => new Promise((r) => setImmediate(r));

describe('token "last used"', () => {
  it('is recorded on use, at most once a minute per token', async () => {
    const store = new MemoryStore();
    const accounts = new Accounts(store);
    await accounts.addUser('alice', ['/']);
    const { record, token } = await accounts.createToken('alice');
    let now = Date.parse('2026-11-25T10:00:00.000Z');
    const auth = new Authenticator(store, () => now);
    assert.equal((await store.getToken(record.id))!.lastUsed, undefined);
    assert.equal((await auth.authenticate(`Bearer ${token}`))?.user, 'alice');
    await settle();
    assert.equal((await store.getToken(record.id))!.lastUsed, '2026-11-25T10:00:00.000Z');
    now += 30_000;
    await auth.authenticate(`Bearer ${token}`);
    await settle();
    assert.equal(
      (await store.getToken(record.id))!.lastUsed,
      '2026-11-25T10:00:00.000Z',
      'not again within a minute',
    );
    now += 31_000;
    await auth.authenticate(`Bearer ${token}`);
    await settle();
    assert.equal((await store.getToken(record.id))!.lastUsed, '2026-11-25T10:01:01.000Z');
    // A wrong secret is no use.
    now += 120_000;
    assert.equal(await auth.authenticate(`Bearer ${token.slice(0, -2)}xx`), undefined);
    await settle();
    assert.equal((await store.getToken(record.id))!.lastUsed, '2026-11-25T10:01:01.000Z');
  });
});
