import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Authenticator } from '../../src/auth/authenticator.js';
import { HookdError } from '../../src/errors/catalog.js';
import { ApiIdentity } from '../../src/identity/api-identity.js';
import { JwtProvider } from '../../src/identity/jwt-provider.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { Accounts } from '../../src/users/accounts.js';
import {
  AUDIENCE,
  ISSUER,
  identityRequest,
  type JwksServer,
  makeKey,
  sign,
  startJwks,
  type TestKey,
} from './identity-helpers.js';

async function refusal(p: Promise<unknown>): Promise<HookdError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof HookdError, String(err));
    return err;
  }
  assert.fail('expected a refusal');
}

describe('API identity: hookd tokens, then the provider', () => {
  let key: TestKey;
  let jwks: JwksServer;
  let store: MemoryStore;
  let accounts: Accounts;
  let adminToken: string;
  const bearer = (t: string) => identityRequest({ authorization: `Bearer ${t}` });

  before(async () => {
    key = await makeKey('ES256', 'k');
    jwks = await startJwks([key]);
    store = new MemoryStore();
    accounts = new Accounts(store);
    await accounts.addUser('admin');
    adminToken = (await accounts.createToken('admin')).token;
  });
  after(async () => jwks.close());

  const identity = (refuseUnknownUsers = false) =>
    new ApiIdentity({
      tokens: new Authenticator(store),
      provider: new JwtProvider({
        jwksUrl: jwks.url,
        issuer: ISSUER,
        audience: AUDIENCE,
        scopesClaim: 'scp',
      }),
      accounts,
      refuseUnknownUsers,
    });

  it('a hookd token still works beside the provider, and a bad one never falls through to it', async () => {
    const id = identity();
    assert.equal((await id.authenticate(bearer(adminToken))).user, 'admin');
    const bad = await refusal(id.authenticate(bearer(`${adminToken.slice(0, -4)}AAAA`)));
    assert.equal(bad.code, 'UNAUTHENTICATED');
    assert.match(bad.message, /bearer token is not valid/);
  });

  it('a JWT user is created on first sight, with the scopes of the claim', async () => {
    assert.equal(await store.getUser('erin'), undefined);
    const p = await identity().authenticate(bearer(await sign(key, { sub: 'erin', scp: ['own'] })));
    assert.deepEqual(p, { user: 'erin', scopes: ['own'] });
    assert.ok(await store.getUser('erin'), 'created');
    // Seen again: the same user, not a conflict.
    assert.equal((await identity().authenticate(bearer(await sign(key, { sub: 'erin' })))).user, 'erin');
  });

  it('with refuseUnknownUsers an unknown user gets 403 naming the option; a known one passes', async () => {
    const err = await refusal(identity(true).authenticate(bearer(await sign(key, { sub: 'frank' }))));
    assert.equal(err.code, 'FORBIDDEN');
    assert.match(err.message, /frank.*--identity-refuse-unknown-users/);
    assert.equal(await store.getUser('frank'), undefined, 'not created');
    await accounts.addUser('frank');
    assert.equal(
      (await identity(true).authenticate(bearer(await sign(key, { sub: 'frank' })))).user,
      'frank',
    );
  });

  it('no credentials 401, refused ones 401 with the reason, an invalid user name 403', async () => {
    const none = await refusal(identity().authenticate(identityRequest()));
    assert.equal(none.code, 'UNAUTHENTICATED');
    assert.match(none.message, /JWT/);
    assert.equal(none.headers?.['WWW-Authenticate'], 'Bearer realm="hookd"');
    const expired = await refusal(
      identity().authenticate(
        bearer(await sign(key, { sub: 'erin' }, { exp: Math.floor(Date.now() / 1000) - 600 })),
      ),
    );
    assert.equal(expired.code, 'UNAUTHENTICATED');
    assert.match(expired.message, /refused.*exp/);
    const admin = await refusal(identity().authenticate(bearer(await sign(key, { sub: 'admin' }))));
    assert.equal(admin.code, 'FORBIDDEN', "a provider's user never becomes hookd's admin");
    assert.match(admin.message, /reserved/);
    const odd = await refusal(identity().authenticate(bearer(await sign(key, { sub: 'auth0|12345' }))));
    assert.equal(odd.code, 'FORBIDDEN');
    assert.match(odd.message, /not a valid hookd user name/);
  });

  it('a provider that cannot decide is 503 IDENTITY_UNAVAILABLE, never a user', async () => {
    jwks.failWith = 503;
    try {
      const id = new ApiIdentity({
        tokens: new Authenticator(store),
        provider: new JwtProvider({ jwksUrl: jwks.url }),
        accounts,
      });
      const err = await refusal(id.authenticate(bearer(await sign(key, { sub: 'erin' }))));
      assert.equal(err.code, 'IDENTITY_UNAVAILABLE');
      assert.equal(err.status, 503);
    } finally {
      jwks.failWith = undefined;
    }
  });

  it('without a provider: tokens only, as before', async () => {
    const id = new ApiIdentity({ tokens: new Authenticator(store) });
    assert.equal((await id.authenticate(bearer(adminToken))).user, 'admin');
    const jwt = await refusal(id.authenticate(bearer(await sign(key, { sub: 'erin' }))));
    assert.equal(jwt.code, 'UNAUTHENTICATED');
  });
});
