import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Authenticator } from '../../src/auth/authenticator.js';
import type { Store, TokenRecord, UserStore } from '../../src/store/index.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { Accounts } from '../../src/users/accounts.js';
import { tempDir } from '../helpers/hookd.js';

/**
 * A real store seen through a window that counts its token reads; `stamped: false` hides the
 * store's credential stamp, as a store without one (PostgreSQL) has none.
 */
function counted(store: Store, stamped = true): { users: UserStore; reads: () => number } {
  let reads = 0;
  const users: UserStore = {
    addUser: (u) => store.addUser(u),
    getUser: (n) => store.getUser(n),
    listUsers: () => store.listUsers(),
    removeUser: (n) => store.removeUser(n),
    setUserScopes: (n, s) => store.setUserScopes(n, s),
    setUserPermissions: (n, p) => store.setUserPermissions(n, p),
    addToken: (t) => store.addToken(t),
    getToken: (id): Promise<TokenRecord | undefined> => {
      reads++;
      return store.getToken(id);
    },
    listTokens: (u) => store.listTokens(u),
    revokeToken: (id) => store.revokeToken(id),
    touchToken: (id, at) => store.touchToken(id, at),
    ...(stamped && store.credentialStamp && { credentialStamp: () => store.credentialStamp!() }),
  };
  return { users, reads: () => reads };
}

const dir = tempDir('hookd-token-records-');
after(() => rmSync(dir, { recursive: true, force: true }));

for (const kind of ['memory', 'sqlite'] as const) {
  describe(`token records kept between requests: ${kind}`, () => {
    const open = (): Store =>
      kind === 'memory' ? new MemoryStore() : new SqliteStore(join(dir, `${kind}-${Math.random()}.db`));

    it('a token used again is not read again while nothing changed', async () => {
      const store = open();
      const accounts = new Accounts(store);
      await accounts.addUser('alice');
      const { token } = await accounts.createToken('alice');
      const { users, reads } = counted(store);
      const auth = new Authenticator(users);
      for (let i = 0; i < 5; i++) assert.equal((await auth.authenticate(`Bearer ${token}`))?.user, 'alice');
      assert.equal(reads(), 1);
      // The secret is checked every time: a wrong one is refused though the record is kept.
      assert.equal(await auth.authenticate(`Bearer ${token.slice(0, -2)}xx`), undefined);
      assert.equal((await auth.authenticate(`Bearer ${token}`))?.user, 'alice');
      await store.close();
    });

    it('a token revoked through the store is refused on the next request', async () => {
      const store = open();
      const accounts = new Accounts(store);
      await accounts.addUser('bob');
      const a = await accounts.createToken('bob');
      const b = await accounts.createToken('bob');
      const { users, reads } = counted(store);
      const auth = new Authenticator(users);
      assert.equal((await auth.authenticate(`Bearer ${a.token}`))?.user, 'bob');
      assert.equal((await auth.authenticate(`Bearer ${b.token}`))?.user, 'bob');
      await store.revokeToken(a.record.id);
      assert.equal(await auth.authenticate(`Bearer ${a.token}`), undefined);
      assert.equal((await auth.authenticate(`Bearer ${b.token}`))?.user, 'bob');
      assert.equal(reads(), 4, 'each read again once after the change');
      await store.close();
    });

    it('a removed user’s token is refused on the next request', async () => {
      const store = open();
      const accounts = new Accounts(store);
      await accounts.addUser('carol');
      const { token } = await accounts.createToken('carol');
      const auth = new Authenticator(counted(store).users);
      assert.equal((await auth.authenticate(`Bearer ${token}`))?.user, 'carol');
      await store.removeUser('carol');
      assert.equal(await auth.authenticate(`Bearer ${token}`), undefined);
      await store.close();
    });
  });
}

describe('token records: a store without a credential stamp', () => {
  it('is read on every request', async () => {
    const store = new MemoryStore();
    const accounts = new Accounts(store);
    await accounts.addUser('dave');
    const { token } = await accounts.createToken('dave');
    const { users, reads } = counted(store, false);
    const auth = new Authenticator(users);
    for (let i = 0; i < 3; i++) assert.equal((await auth.authenticate(`Bearer ${token}`))?.user, 'dave');
    assert.equal(reads(), 3);
  });
});

describe('token records: SQLite written by another connection', () => {
  it('a token revoked through another connection to the file is refused on the next request', async () => {
    const file = join(dir, 'shared.db');
    const daemon = new SqliteStore(file);
    const accounts = new Accounts(daemon);
    await accounts.addUser('erin');
    const { record, token } = await accounts.createToken('erin');
    const { users, reads } = counted(daemon);
    const auth = new Authenticator(users);
    for (let i = 0; i < 3; i++) assert.equal((await auth.authenticate(`Bearer ${token}`))?.user, 'erin');
    assert.equal(reads(), 1);
    // `hookd token revoke` with no daemon to talk to writes the file from its own process.
    const beside = new SqliteStore(file);
    assert.equal(await beside.revokeToken(record.id), true);
    await beside.close();
    assert.equal(await auth.authenticate(`Bearer ${token}`), undefined);
    await daemon.close();
  });

  it('another connection’s commit that touches no credential costs one read, not a wrong answer', async () => {
    const file = join(dir, 'shared-hooks.db');
    const daemon = new SqliteStore(file);
    const accounts = new Accounts(daemon);
    await accounts.addUser('frank');
    const { token } = await accounts.createToken('frank');
    const { users, reads } = counted(daemon);
    const auth = new Authenticator(users);
    assert.equal((await auth.authenticate(`Bearer ${token}`))?.user, 'frank');
    const beside = new SqliteStore(file);
    await beside.addUser({ name: 'grace', created: new Date().toISOString() });
    await beside.close();
    assert.equal((await auth.authenticate(`Bearer ${token}`))?.user, 'frank');
    assert.equal((await auth.authenticate(`Bearer ${token}`))?.user, 'frank');
    assert.equal(reads(), 2);
    await daemon.close();
  });
});
