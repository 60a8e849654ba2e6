import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load-config.js';
import { identityProviderFrom } from '../../src/identity/from-config.js';
import {
  JWKS_COOLDOWN_MS,
  JWT_CLOCK_TOLERANCE_S,
  JwtProvider,
  VERIFIED_TTL_MS,
} from '../../src/identity/jwt-provider.js';
import { tempDir } from '../helpers/hookd.js';
import { sleep } from '../helpers/servers.js';
import {
  AUDIENCE,
  hs256WithPublicKey,
  ISSUER,
  identityRequest,
  type JwksServer,
  makeKey,
  sign,
  startJwks,
  type TestKey,
  unsignedToken,
} from './identity-helpers.js';

const bearer = (t: string) => identityRequest({ authorization: `Bearer ${t}` });

describe('JWT provider (real JWKS endpoint on loopback)', () => {
  let rsa: TestKey;
  let ec: TestKey;
  let jwks: JwksServer;
  let provider: JwtProvider;

  before(async () => {
    rsa = await makeKey('RS256', 'rsa-1');
    ec = await makeKey('ES256', 'ec-1');
    jwks = await startJwks([rsa, ec]);
    provider = new JwtProvider({ jwksUrl: jwks.url, issuer: ISSUER, audience: AUDIENCE });
  });
  after(async () => jwks.close());

  it('identifies RS256 and ES256 tokens by their sub', async () => {
    assert.deepEqual(await provider.identify(bearer(await sign(rsa, { sub: 'alice' }))), {
      kind: 'user',
      user: 'alice',
    });
    assert.deepEqual(await provider.identify(bearer(await sign(ec, { sub: 'bob' }))), {
      kind: 'user',
      user: 'bob',
    });
  });

  it('caches the key set: many tokens, one fetch', async () => {
    const before = jwks.fetches;
    for (let i = 0; i < 20; i++) {
      const r = await provider.identify(bearer(await sign(i % 2 ? rsa : ec, { sub: `u${i}` })));
      assert.equal(r.kind, 'user');
    }
    assert.equal(jwks.fetches, before, 'known kids never refetch');
  });

  it('refuses an expired token, allowing the documented clock tolerance', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await sign(rsa, { sub: 'alice' }, { exp: now - JWT_CLOCK_TOLERANCE_S - 60 });
    const r = await provider.identify(bearer(expired));
    assert.equal(r.kind, 'refused');
    assert.match((r as { reason: string }).reason, /exp/);
    const justExpired = await sign(rsa, { sub: 'alice' }, { exp: now - 5 });
    assert.equal((await provider.identify(bearer(justExpired))).kind, 'user', 'within the tolerance');
    const notYet = await sign(rsa, { sub: 'alice', nbf: now + JWT_CLOCK_TOLERANCE_S + 120 });
    assert.equal((await provider.identify(bearer(notYet))).kind, 'refused', 'nbf in the future');
  });

  it('refuses a wrong issuer and a wrong audience', async () => {
    const iss = await provider.identify(bearer(await sign(rsa, { sub: 'alice', iss: 'https://evil.test/' })));
    assert.equal(iss.kind, 'refused');
    assert.match((iss as { reason: string }).reason, /iss/);
    const aud = await provider.identify(bearer(await sign(rsa, { sub: 'alice', aud: 'another-service' })));
    assert.equal(aud.kind, 'refused');
    assert.match((aud as { reason: string }).reason, /aud/);
  });

  it('refuses alg "none" and an HS256 token signed with the public key as secret', async () => {
    const none = await provider.identify(bearer(unsignedToken({ sub: 'admin' })));
    assert.equal(none.kind, 'refused');
    const confused = await provider.identify(bearer(await hs256WithPublicKey(rsa, { sub: 'admin' })));
    assert.equal(confused.kind, 'refused');
    // The same attack against a provider holding the PEM itself (the key-file provider).
    const dir = tempDir();
    const pem = join(dir, 'key.pem');
    writeFileSync(pem, rsa.publicPem);
    const fromFile = identityProviderFrom(
      loadConfig({ env: {}, flags: { dataDir: dir, identityJwtKeyFile: pem } }),
      { trusts: () => false },
    )!;
    assert.equal((await fromFile.identify(bearer(await sign(rsa, { sub: 'carol' })))).kind, 'user');
    assert.equal(
      (await fromFile.identify(bearer(await hs256WithPublicKey(rsa, { sub: 'x' })))).kind,
      'refused',
    );
    assert.equal((await fromFile.identify(bearer(unsignedToken({ sub: 'x' })))).kind, 'refused');
    assert.equal(
      (await fromFile.identify(bearer(await sign(ec, { sub: 'x' })))).kind,
      'refused',
      'another key',
    );
  });

  it('refuses a token signed by a key the JWKS does not hold, and a tampered one', async () => {
    const stranger = await makeKey('RS256', 'rsa-1'); // same kid, another key
    assert.equal((await provider.identify(bearer(await sign(stranger, { sub: 'alice' })))).kind, 'refused');
    const good = await sign(rsa, { sub: 'alice' });
    const [h, , s] = good.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'admin', iss: ISSUER, aud: AUDIENCE })).toString('base64url')}.${s}`;
    assert.equal((await provider.identify(bearer(forged))).kind, 'refused');
  });

  it('no bearer is anonymous; a bearer that is no JWT is refused', async () => {
    assert.deepEqual(await provider.identify(identityRequest()), { kind: 'anonymous' });
    assert.deepEqual(await provider.identify(identityRequest({ authorization: 'Basic YTpi' })), {
      kind: 'anonymous',
    });
    assert.equal((await provider.identify(bearer('opaque-token'))).kind, 'refused');
  });

  it('a user claim other than sub, and the scopes claim (array or space-separated)', async () => {
    const p = new JwtProvider({
      jwksUrl: jwks.url,
      issuer: ISSUER,
      audience: AUDIENCE,
      userClaim: 'preferred_username',
      scopesClaim: 'hookd_scopes',
    });
    assert.deepEqual(
      await p.identify(
        bearer(
          await sign(rsa, {
            sub: 'id-1',
            preferred_username: 'dana',
            hookd_scopes: ['own', '/repositories/dana'],
          }),
        ),
      ),
      { kind: 'user', user: 'dana', scopes: ['own', '/repositories/dana'] },
    );
    assert.deepEqual(
      await p.identify(bearer(await sign(ec, { preferred_username: 'dana', hookd_scopes: 'own /x' }))),
      {
        kind: 'user',
        user: 'dana',
        scopes: ['own', '/x'],
      },
    );
    assert.deepEqual(await p.identify(bearer(await sign(ec, { preferred_username: 'dana' }))), {
      kind: 'user',
      user: 'dana',
    });
    assert.equal(
      (await p.identify(bearer(await sign(ec, { sub: 'id-1' })))).kind,
      'refused',
      'no user claim',
    );
    assert.equal(
      (await p.identify(bearer(await sign(ec, { preferred_username: 'dana', hookd_scopes: [1] })))).kind,
      'refused',
    );
  });

  it('key rotation: a new kid refetches the JWKS (after the cooldown), the retired key stops working', async () => {
    const k1 = await makeKey('RS256', 'k1');
    const server = await startJwks([k1]);
    try {
      const p = new JwtProvider({ jwksUrl: server.url, issuer: ISSUER, audience: AUDIENCE, cooldownMs: 300 });
      assert.equal((await p.identify(bearer(await sign(k1, { sub: 'alice' })))).kind, 'user');
      assert.equal(server.fetches, 1);
      // Rotation: the identity provider now publishes k2 only.
      const k2 = await makeKey('ES256', 'k2');
      server.keys = [k2];
      await sleep(400);
      assert.deepEqual(await p.identify(bearer(await sign(k2, { sub: 'bob' }))), {
        kind: 'user',
        user: 'bob',
      });
      assert.equal(server.fetches, 2, 'one refetch for the unknown kid');
      await sleep(400);
      // A token not seen before (a verified one is remembered for up to a minute: see below).
      assert.equal(
        (await p.identify(bearer(await sign(k1, { sub: 'alice', jti: 'after-rotation' })))).kind,
        'refused',
        'k1 retired',
      );
    } finally {
      await server.close();
    }
  });

  it('remembers a verified token for at most VERIFIED_TTL_MS and never past its exp', async () => {
    const k1 = await makeKey('ES256', 'k1');
    const server = await startJwks([k1]);
    let now = Date.now();
    try {
      const p = new JwtProvider({
        jwksUrl: server.url,
        issuer: ISSUER,
        audience: AUDIENCE,
        cooldownMs: 0,
        now: () => now,
      });
      const token = await sign(k1, { sub: 'alice' });
      assert.equal((await p.identify(bearer(token))).kind, 'user');
      // The identity provider withdraws the key: the remembered verification still holds…
      server.keys = [await makeKey('ES256', 'k2')];
      await (p as unknown as { key: { reload(): Promise<void> } }).key.reload();
      assert.equal((await p.identify(bearer(token))).kind, 'user', 'remembered');
      // …until VERIFIED_TTL_MS has passed: then it is verified again, and refused.
      now += VERIFIED_TTL_MS + 1;
      assert.equal((await p.identify(bearer(token))).kind, 'refused');
      // Never past exp: a token expiring in 1 s is verified again once that second is over.
      const short = await sign(k1, { sub: 'bob' }, { exp: Math.floor(now / 1000) + 1 });
      server.keys = [k1];
      await (p as unknown as { key: { reload(): Promise<void> } }).key.reload();
      assert.equal((await p.identify(bearer(short))).kind, 'user');
      server.keys = [];
      await (p as unknown as { key: { reload(): Promise<void> } }).key.reload();
      now += 2000;
      assert.equal((await p.identify(bearer(short))).kind, 'refused', 'its exp ended the memory');
      const keys = [...(p as unknown as { verified: Map<string, unknown> }).verified.keys()];
      for (const k of keys)
        assert.ok(!token.includes(k) && k.length === 43, 'keyed by a hash, not the token');
    } finally {
      await server.close();
    }
  });

  it(`an unknown kid refetches at most once per ${JWKS_COOLDOWN_MS / 1000} s`, async () => {
    const k1 = await makeKey('ES256', 'k1');
    const server = await startJwks([k1]);
    try {
      const p = new JwtProvider({ jwksUrl: server.url, issuer: ISSUER, audience: AUDIENCE });
      assert.equal((await p.identify(bearer(await sign(k1, { sub: 'alice' })))).kind, 'user');
      const unknown = await makeKey('ES256', 'never-published');
      for (let i = 0; i < 25; i++) {
        assert.equal((await p.identify(bearer(await sign(unknown, { sub: `x${i}` })))).kind, 'refused');
      }
      assert.equal(server.fetches, 1, 'a flood of unknown kids within the cooldown fetches nothing more');
    } finally {
      await server.close();
    }
  });

  it('a JWKS endpoint that fails or is gone is "unavailable", never a user', async () => {
    const k = await makeKey('RS256', 'k');
    const server = await startJwks([k]);
    server.failWith = 500;
    const p = new JwtProvider({ jwksUrl: server.url, issuer: ISSUER, audience: AUDIENCE });
    const r = await p.identify(bearer(await sign(k, { sub: 'alice' })));
    assert.equal(r.kind, 'unavailable', JSON.stringify(r));
    await server.close();
    const gone = new JwtProvider({ jwksUrl: server.url, issuer: ISSUER, audience: AUDIENCE });
    assert.equal((await gone.identify(bearer(await sign(k, { sub: 'alice' })))).kind, 'unavailable');
  });
});

/** A token with any header, claims valid for an hour, and a signature of random bytes. */
function forgedToken(header: Record<string, unknown>, claims: Record<string, unknown> = { sub: 'mallory' }) {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const body = { iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 3600, ...claims };
  return `${b64(header)}.${b64(body)}.${Buffer.from('not a signature at all').toString('base64url')}`;
}

// On Node 22 and later WebCrypto reports a key of the wrong type as a DOMException
// without an ERR_JOSE_* code, which was taken for a provider outage (503). A token that no key
// can verify is refused (401) on every Node; only an unreachable or broken JWKS is "unavailable".
describe('JWT provider: refusals are not outages (every supported Node)', () => {
  let rsa: TestKey;
  let ec: TestKey;
  before(async () => {
    rsa = await makeKey('RS256', 'rsa-1');
    ec = await makeKey('ES256', 'ec-1');
  });

  it('a key file of another type than the token is refused: ES256 against RSA, RS256 against EC', async () => {
    const rsaFile = new JwtProvider({
      key: createPublicKey(rsa.publicPem),
      issuer: ISSUER,
      audience: AUDIENCE,
    });
    const r1 = await rsaFile.identify(bearer(await sign(ec, { sub: 'alice' })));
    assert.equal(r1.kind, 'refused', JSON.stringify(r1));
    const ecFile = new JwtProvider({
      key: createPublicKey(ec.publicPem),
      issuer: ISSUER,
      audience: AUDIENCE,
    });
    const r2 = await ecFile.identify(bearer(await sign(rsa, { sub: 'alice' })));
    assert.equal(r2.kind, 'refused', JSON.stringify(r2));
    // The right type still passes: the refusals above are about the key, not the provider.
    assert.equal((await rsaFile.identify(bearer(await sign(rsa, { sub: 'alice' })))).kind, 'user');
  });

  it('an algorithm hookd does not accept is refused, with a key file and with a JWKS', async () => {
    const jwks = await startJwks([rsa, ec]);
    try {
      const fromJwks = new JwtProvider({ jwksUrl: jwks.url, issuer: ISSUER, audience: AUDIENCE });
      const fromFile = new JwtProvider({
        key: createPublicKey(rsa.publicPem),
        issuer: ISSUER,
        audience: AUDIENCE,
      });
      for (const alg of ['ES256K', 'RS1', 'HS512', 'XYZ']) {
        for (const p of [fromJwks, fromFile]) {
          const r = await p.identify(bearer(forgedToken({ alg, kid: 'rsa-1', typ: 'JWT' })));
          assert.equal(r.kind, 'refused', `${alg}: ${JSON.stringify(r)}`);
        }
      }
    } finally {
      await jwks.close();
    }
  });

  it("a malformed key in the JWKS, or one of another type under the token's kid, is refused", async () => {
    const broken: TestKey = {
      ...rsa,
      kid: 'broken',
      publicJwk: { ...rsa.publicJwk, kid: 'broken', n: 'AAAA', e: '!' },
    };
    const typeless: TestKey = {
      ...rsa,
      kid: 'ec-named',
      publicJwk: { ...rsa.publicJwk, kid: 'ec-named', alg: undefined },
    };
    const jwks = await startJwks([broken, typeless]);
    try {
      const p = new JwtProvider({ jwksUrl: jwks.url, issuer: ISSUER, audience: AUDIENCE });
      const malformed = await p.identify(bearer(forgedToken({ alg: 'RS256', kid: 'broken', typ: 'JWT' })));
      assert.equal(malformed.kind, 'refused', JSON.stringify(malformed));
      // ES256 signed, naming a kid whose key is RSA.
      const other = await p.identify(bearer(await sign({ ...ec, kid: 'ec-named' }, { sub: 'alice' })));
      assert.equal(other.kind, 'refused', JSON.stringify(other));
      assert.ok(jwks.fetches >= 1, 'the JWKS was asked');
    } finally {
      await jwks.close();
    }
  });

  it('a JWKS that answers something that is no key set is "unavailable"', async () => {
    const jwks = await startJwks([rsa]);
    jwks.keys = [{ ...rsa, publicJwk: 'not a key' as unknown as TestKey['publicJwk'] }];
    try {
      const p = new JwtProvider({ jwksUrl: jwks.url, issuer: ISSUER, audience: AUDIENCE });
      const r = await p.identify(bearer(await sign(rsa, { sub: 'alice' })));
      assert.equal(r.kind, 'unavailable', JSON.stringify(r));
    } finally {
      await jwks.close();
    }
  });
});
