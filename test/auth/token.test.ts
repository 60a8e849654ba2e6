import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Authenticator } from '../../src/auth/authenticator.js';
import { hashSecret, newToken, parseToken, secretMatches } from '../../src/auth/token.js';
import { isValidUserName } from '../../src/auth/user-name.js';
import { HookdError } from '../../src/errors/catalog.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { Accounts } from '../../src/users/accounts.js';

describe('API tokens', () => {
  it('have the shape hkd_<12 hex>_<43 base64url> and carry 256 random bits', () => {
    const t = newToken();
    assert.match(t.token, /^hkd_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    assert.equal(t.token.slice(4, 16), t.id);
    const secret = t.token.slice(17);
    assert.equal(Buffer.from(secret, 'base64url').length, 32);
  });

  it('are different every time', () => {
    const seen = new Set(Array.from({ length: 200 }, () => newToken().token));
    assert.equal(seen.size, 200);
  });

  it('store only a hash of the secret, never the secret or the token', () => {
    const t = newToken();
    const secret = t.token.slice(17);
    assert.match(t.hash, /^[0-9a-f]{64}$/);
    assert.equal(t.hash, hashSecret(secret));
    assert.equal(t.hash.includes(secret), false);
    assert.notEqual(t.hash, hashSecret(t.token));
  });

  it('parse back into id and secret', () => {
    const t = newToken();
    assert.deepEqual(parseToken(t.token), { id: t.id, secret: t.token.slice(17) });
  });

  for (const bad of [
    '',
    'hkd_',
    'Bearer x',
    'hkd_0123456789ab',
    'hkd_0123456789AB_' + 'a'.repeat(43),
    'hkd_0123456789ab_' + 'a'.repeat(42),
    'hkd_0123456789ab_' + 'a'.repeat(44),
    'hkd_0123456789ab_' + 'a'.repeat(42) + '=',
    ' hkd_0123456789ab_' + 'a'.repeat(43),
    'hkd_0123456789ab_' + 'a'.repeat(43) + '\n',
    'xyz_0123456789ab_' + 'a'.repeat(43),
  ]) {
    it(`refuse to parse ${JSON.stringify(bad.length > 30 ? `${bad.slice(0, 30)}…` : bad)}`, () => {
      assert.equal(parseToken(bad), undefined);
    });
  }

  it('match only their own secret', () => {
    const a = newToken();
    const b = newToken();
    const secretA = a.token.slice(17);
    assert.equal(secretMatches(secretA, a.hash), true);
    assert.equal(secretMatches(secretA, b.hash), false);
    assert.equal(secretMatches(`${secretA.slice(0, -1)}x`, a.hash), secretA.endsWith('x'));
    // A damaged stored hash (wrong length) is a mismatch, not a crash.
    assert.equal(secretMatches(secretA, a.hash.slice(0, 10)), false);
    assert.equal(secretMatches(secretA, ''), false);
  });
});

describe('Authenticator', () => {
  async function setup() {
    const store = new MemoryStore();
    const accounts = new Accounts(store);
    await accounts.addUser('alice');
    await accounts.addUser('bob');
    const alice = await accounts.createToken('alice', 'laptop');
    const bob = await accounts.createToken('bob');
    return { store, auth: new Authenticator(store), alice, bob };
  }

  it('resolves a valid bearer token to its user and token id', async () => {
    const { auth, alice, bob } = await setup();
    assert.deepEqual(await auth.authenticate(`Bearer ${alice.token}`), {
      user: 'alice',
      tokenId: alice.record.id,
    });
    assert.deepEqual(await auth.authenticate(`Bearer ${bob.token}`), { user: 'bob', tokenId: bob.record.id });
  });

  it('accepts the scheme in any case and surrounding blanks (RFC 9110: the scheme is case-insensitive)', async () => {
    const { auth, alice } = await setup();
    assert.equal((await auth.authenticate(`bearer ${alice.token}`))?.user, 'alice');
    assert.equal((await auth.authenticate(`BEARER \t${alice.token} `))?.user, 'alice');
  });

  it('refuses missing, malformed, foreign-scheme, unknown and tampered tokens', async () => {
    const { auth, alice } = await setup();
    const [, id, secret] = /^hkd_([0-9a-f]{12})_(.+)$/.exec(alice.token)!;
    const flipped = secret!.startsWith('A') ? `B${secret!.slice(1)}` : `A${secret!.slice(1)}`;
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      alice.token,
      `Basic ${Buffer.from(`alice:${alice.token}`).toString('base64')}`,
      `Token ${alice.token}`,
      `Bearer ${alice.token} extra`,
      `Bearer ${newToken().token}`,
      `Bearer hkd_${id}_${flipped}`,
      `Bearer hkd_ffffffffffff_${secret}`,
    ]) {
      assert.equal(await auth.authenticate(header), undefined, String(header));
    }
  });

  it('refuses a token once it is revoked, and every token of a removed user', async () => {
    const { store, auth, alice, bob } = await setup();
    assert.equal(await store.revokeToken(alice.record.id), true);
    assert.equal(await auth.authenticate(`Bearer ${alice.token}`), undefined);
    assert.equal((await auth.authenticate(`Bearer ${bob.token}`))?.user, 'bob');
    await store.removeUser('bob');
    assert.equal(await auth.authenticate(`Bearer ${bob.token}`), undefined);
  });
});

describe('Accounts', () => {
  it('stores the token record with its hash and label, never the token text', async () => {
    const store = new MemoryStore();
    const accounts = new Accounts(store);
    await accounts.addUser('alice');
    const { record, token } = await accounts.createToken('alice', 'ci');
    const stored = await store.getToken(record.id);
    assert.deepEqual(stored, record);
    assert.equal(record.label, 'ci');
    assert.equal(record.user, 'alice');
    assert.equal(JSON.stringify(stored).includes(token.slice(17)), false);
    assert.match(record.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
  });

  it('refuses a second user of the same name with CONFLICT', async () => {
    const accounts = new Accounts(new MemoryStore());
    await accounts.addUser('alice');
    await assert.rejects(
      accounts.addUser('alice'),
      (e: unknown) => e instanceof HookdError && e.code === 'CONFLICT',
    );
  });

  it('refuses an invalid user name, naming the rule', async () => {
    const accounts = new Accounts(new MemoryStore());
    for (const name of ['', '1alice', 'a b', 'a/b', 'ä', `a${'b'.repeat(64)}`, 'alice\n']) {
      await assert.rejects(
        accounts.addUser(name),
        (e: unknown) =>
          e instanceof HookdError && e.code === 'BAD_REQUEST' && /must be a letter/.test(e.message),
        JSON.stringify(name),
      );
    }
  });

  it('refuses a token for an unknown user with NOT_FOUND and a hint', async () => {
    const accounts = new Accounts(new MemoryStore());
    await assert.rejects(
      accounts.createToken('ghost'),
      (e: unknown) =>
        e instanceof HookdError && e.code === 'NOT_FOUND' && e.message.includes('hookd user add ghost'),
    );
  });

  it('accepts the user names the rule allows', () => {
    for (const name of ['a', 'admin', 'Alice.Smith', 'ci-bot_2', `a${'b'.repeat(63)}`]) {
      assert.equal(isValidUserName(name), true, name);
    }
  });
});
