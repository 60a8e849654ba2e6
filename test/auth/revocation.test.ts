import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { api, type HookdProcess, spawnHookd } from '../helpers/hookd.js';

interface TokenBody {
  Id: string;
  Token?: string;
}

const SERVED = { Method: 'POST', Path: '/orders/1', StatusCode: 201 };

/**
 * Credentials on the report path, against a running daemon over HTTP: a token, a user and a
 * permission taken away are refused on the very next request, however warm the path was. A token's
 * record is kept only while the store's credential stamp stands
 * (docs/decisions/0079-token-records-kept-behind-a-credential-stamp.md), and these tests fail if
 * what is kept ever answers for a change.
 */
describe('revoked credentials on the report path', { timeout: 120_000 }, () => {
  let d: HookdProcess;

  const report = (token: string, body: unknown = SERVED) =>
    api<{ accepted: number; code?: string }>(d.url, token, 'POST', '/_hookd/report', body);
  const newToken = async (user: string): Promise<TokenBody> => {
    const t = await api<TokenBody>(d.url, d.token, 'POST', `/_hookd/users/${user}/tokens`, {});
    assert.equal(t.status, 201, t.text);
    return t.body;
  };
  /** Many reports in a row, so that anything kept between requests would be kept. */
  const warm = async (token: string) => {
    for (let i = 0; i < 20; i++) assert.equal((await report(token)).status, 202);
  };

  before(async () => {
    d = await spawnHookd([], { timeoutMs: 30_000 });
    for (const Name of ['rita', 'sam', 'svc'])
      assert.equal((await api(d.url, d.token, 'POST', '/_hookd/users', { Name })).status, 201);
  });
  after(async () => {
    await d?.stop();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('a revoked token is refused on the next request; the user’s other token still works', async () => {
    const a = await newToken('rita');
    const b = await newToken('rita');
    await warm(a.Token!);
    await warm(b.Token!);
    assert.equal((await api(d.url, d.token, 'DELETE', `/_hookd/users/rita/tokens/${a.Id}`)).status, 204);
    const refused = await report(a.Token!);
    assert.equal(refused.status, 401, refused.text);
    assert.equal(refused.body.code, 'UNAUTHENTICATED');
    assert.equal((await report(b.Token!)).status, 202);
  });

  it('a rotated token: the new one works at once, the old one is refused at once', async () => {
    const old = await newToken('sam');
    await warm(old.Token!);
    const fresh = await newToken('sam');
    assert.equal((await report(fresh.Token!)).status, 202);
    assert.equal((await api(d.url, d.token, 'DELETE', `/_hookd/users/sam/tokens/${old.Id}`)).status, 204);
    assert.equal((await report(old.Token!)).status, 401);
    assert.equal((await report(fresh.Token!)).status, 202);
  });

  it('a removed user’s token is refused on the next request', async () => {
    const t = await newToken('sam');
    await warm(t.Token!);
    assert.equal((await api(d.url, d.token, 'DELETE', '/_hookd/users/sam')).status, 204);
    assert.equal((await report(t.Token!)).status, 401);
  });

  it('a withdrawn report permission holds on the next report', async () => {
    const t = await newToken('svc');
    const forRita = { ...SERVED, User: 'rita' };
    assert.equal((await report(t.Token!, forRita)).status, 403, 'no permission yet');
    const grant = await api(d.url, d.token, 'PUT', '/_hookd/users/svc', {
      Scopes: ['own'],
      Permissions: ['report'],
    });
    assert.equal(grant.status, 200, grant.text);
    for (let i = 0; i < 20; i++) assert.equal((await report(t.Token!, forRita)).status, 202);
    const withdraw = await api(d.url, d.token, 'PUT', '/_hookd/users/svc', {
      Scopes: ['own'],
      Permissions: [],
    });
    assert.equal(withdraw.status, 200, withdraw.text);
    const refused = await report(t.Token!, forRita);
    assert.equal(refused.status, 403, refused.text);
    // Its own reports are still taken.
    assert.equal((await report(t.Token!)).status, 202);
  });

  it('the admin reports requests made by anyone (it has every permission, always)', async () => {
    const r = await report(d.token, { ...SERVED, User: 'rita' });
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.accepted, 1);
  });
});
