import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load-config.js';
import { checkConfig } from '../../src/hookd-cli/main.js';
import { configError } from './config-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'hookd-identity-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const load = (flags: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}, configFile?: unknown) => {
  let file: string | undefined;
  if (configFile !== undefined) {
    file = join(dir, `c${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(configFile));
  }
  return loadConfig({ flags: { dataDir: dir, ...flags, ...(file && { config: file }) }, env });
};

describe('identity options', () => {
  it('none by default: no provider keys at all', () => {
    const c = load();
    assert.equal(
      Object.keys(c).some((k) => k.startsWith('identity')),
      false,
    );
  });

  it('JWT from flags, HOOKD_* and the config file', () => {
    assert.deepEqual(
      Object.entries(
        load({
          identityJwtJwksUrl: 'https://id.example/jwks.json',
          identityJwtIssuer: 'https://id.example/',
          identityJwtAudience: 'svc',
          identityJwtUserClaim: 'preferred_username',
          identityJwtScopesClaim: 'hookd_scopes',
        }),
      ).filter(([k]) => k.startsWith('identity')),
      [
        ['identityJwtJwksUrl', 'https://id.example/jwks.json'],
        ['identityJwtIssuer', 'https://id.example/'],
        ['identityJwtAudience', 'svc'],
        ['identityJwtUserClaim', 'preferred_username'],
        ['identityJwtScopesClaim', 'hookd_scopes'],
      ],
    );
    assert.equal(
      load({}, { HOOKD_IDENTITY_JWT_JWKS_URL: 'http://127.0.0.1:9/jwks' }).identityJwtJwksUrl,
      'http://127.0.0.1:9/jwks',
    );
    const fromFile = load(
      {},
      {},
      { identity: { jwt: { jwksUrl: 'https://a/j', audience: 'x' }, refuseUnknownUsers: true } },
    );
    assert.equal(fromFile.identityJwtJwksUrl, 'https://a/j');
    assert.equal(fromFile.identityJwtAudience, 'x');
    assert.equal(fromFile.identityRefuseUnknownUsers, true);
  });

  it('header and forward auth; durations', () => {
    assert.equal(load({ identityHeader: 'X-Forwarded-User' }).identityHeader, 'X-Forwarded-User');
    const f = load(
      {},
      {
        HOOKD_IDENTITY_FORWARD_URL: 'http://127.0.0.1:4180/oauth2/auth',
        HOOKD_IDENTITY_FORWARD_USER_HEADER: 'X-Auth-Request-User',
        HOOKD_IDENTITY_FORWARD_TTL: '2m',
        HOOKD_IDENTITY_FORWARD_TIMEOUT: '750ms',
      },
    );
    assert.equal(f.identityForwardUrl, 'http://127.0.0.1:4180/oauth2/auth');
    assert.equal(f.identityForwardUserHeader, 'X-Auth-Request-User');
    assert.equal(f.identityForwardTtlMs, 120_000);
    assert.equal(f.identityForwardTimeoutMs, 750);
    assert.equal(
      load({}, {}, { identity: { forward: { url: 'http://a/', ttl: 10 } } }).identityForwardTtlMs,
      10_000,
    );
    assert.equal(
      load({ identityForwardUrl: 'http://a/', identityForwardTtlMs: '0' }).identityForwardTtlMs,
      0,
    );
  });

  it('refuses two providers, naming both', () => {
    const m = configError(() =>
      load({ identityHeader: 'X-Forwarded-User' }, { HOOKD_IDENTITY_FORWARD_URL: 'http://a/' }),
    );
    assert.match(m, /at most one identity provider/);
    assert.match(m, /--identity-header/);
    assert.match(m, /HOOKD_IDENTITY_FORWARD_URL/);
    assert.match(
      configError(() => load({ identityJwtJwksUrl: 'http://a/j', identityJwtKeyFile: '/k.pem' })),
      /at most one/,
    );
  });

  it("refuses a provider's tuning without the provider, and bad values", () => {
    assert.match(
      configError(() => load({ identityJwtIssuer: 'x' })),
      /--identity-jwt-issuer: applies to JWTs only/,
    );
    assert.match(
      configError(() => load({ identityForwardTtlMs: '5s' })),
      /--identity-forward-ttl: applies to forward auth only/,
    );
    assert.match(
      configError(() => load({ identityRefuseUnknownUsers: true })),
      /needs an identity provider/,
    );
    assert.match(
      configError(() => load({ identityJwtJwksUrl: 'ftp://x/' })),
      /http:\/\/ or https:\/\//,
    );
    assert.match(
      configError(() => load({ identityHeader: 'X Bad' })),
      /header name/,
    );
    assert.match(
      configError(() => load({ identityForwardUrl: 'http://a/', identityForwardTimeoutMs: 'soon' })),
      /duration/,
    );
    assert.match(
      configError(() => load({ identityForwardUrl: 'http://a/', identityForwardTimeoutMs: '2h' })),
      /duration/,
    );
    assert.match(
      configError(() => load({}, {}, { identity: { heder: 'X' } })),
      /unknown key "identity.heder"/,
    );
  });

  it('a key file that is missing or not a public key fails the start, named', () => {
    assert.match(
      configError(() => checkConfig(load({ identityJwtKeyFile: join(dir, 'missing.pem') }))),
      /identity.jwt.keyFile: cannot read .*missing.pem: ENOENT/,
    );
    const junk = join(dir, 'junk.pem');
    writeFileSync(junk, 'not a key');
    assert.match(
      configError(() => checkConfig(load({ identityJwtKeyFile: junk }))),
      /junk.pem is not a PEM public key/,
    );
  });
});
