import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HeaderProvider } from '../../src/identity/header-provider.js';
import { TrustedProxies } from '../../src/server/trusted-proxies.js';
import { identityRequest } from './identity-helpers.js';

describe('header provider', () => {
  const p = new HeaderProvider('X-Forwarded-User', new TrustedProxies(['10.0.0.0/8', '::1']));

  it('believes the header only from a trusted proxy', async () => {
    assert.deepEqual(await p.identify(identityRequest({ 'x-forwarded-user': 'alice' }, '10.1.2.3')), {
      kind: 'user',
      user: 'alice',
    });
    assert.deepEqual(await p.identify(identityRequest({ 'X-Forwarded-User': 'alice' }, '::1')), {
      kind: 'user',
      user: 'alice',
    });
    assert.deepEqual(await p.identify(identityRequest({ 'x-forwarded-user': 'alice' }, '192.0.2.7')), {
      kind: 'anonymous',
    });
    assert.deepEqual(await p.identify(identityRequest({ 'x-forwarded-user': 'alice' }, undefined)), {
      kind: 'anonymous',
    });
  });

  it('no or an empty header is anonymous; two users are refused', async () => {
    assert.deepEqual(await p.identify(identityRequest({}, '10.0.0.1')), { kind: 'anonymous' });
    assert.deepEqual(await p.identify(identityRequest({ 'x-forwarded-user': '  ' }, '10.0.0.1')), {
      kind: 'anonymous',
    });
    assert.equal(
      (await p.identify(identityRequest({ 'x-forwarded-user': 'a, b' }, '10.0.0.1'))).kind,
      'refused',
    );
  });

  it('names the header the proxy must guard, in lower case', () => {
    assert.equal(p.guardedHeader, 'x-forwarded-user');
  });
});
