import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { TokenClient } from '../../src/oauth2/index.js';
import { AddressPolicy } from '../../src/policy/address-policy.js';
import { createPinnedDispatcher } from '../../src/transports/index.js';
import { closedPort } from '../helpers/servers.js';

// The token client's own rules against a loopback token endpoint whose answers the test sets:
// single-flight, RFC 6749 §2.3.1 encoding, the cache, and the named errors. The grant against a
// real authorization server is test/oauth2/oauth2.test.ts.
describe('TokenClient', () => {
  let url = '';
  let seen: { authorization: string; body: string }[] = [];
  let answer: (n: number) => { status: number; body: string } = (n) => ({
    status: 200,
    body: JSON.stringify({ access_token: `t${n}`, token_type: 'Bearer' }),
  });
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ authorization: req.headers.authorization ?? '', body });
      const a = answer(seen.length);
      // A slow answer, so that concurrent callers overlap.
      setTimeout(() => res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body), 20);
    });
  });
  const loopback = () => createPinnedDispatcher(new AddressPolicy(['127.0.0.0/8']));
  const creds = (secret = 's') => ({ TokenUrl: url, ClientId: 'hookd', ClientSecret: secret, Scope: 'a b' });
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token?tenant=x`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('asks once for concurrent callers, form-encodes the client in Basic, and caches the token', async () => {
    seen = [];
    const c = new TokenClient({ dispatcher: loopback() });
    const tokens = await Promise.all(Array.from({ length: 5 }, () => c.token(creds('a:b%c d'))));
    assert.deepEqual(new Set(tokens), new Set(['t1']));
    assert.equal(await c.token(creds('a:b%c d')), 't1');
    assert.equal(seen.length, 1);
    const basic = Buffer.from(seen[0]!.authorization.replace(/^Basic /, ''), 'base64').toString();
    assert.equal(basic, 'hookd:a%3Ab%25c+d');
    assert.deepEqual(Object.fromEntries(new URLSearchParams(seen[0]!.body)), {
      grant_type: 'client_credentials',
      scope: 'a b',
    });
    // Another secret is another token; a refused token is asked for again once.
    assert.equal(await c.token(creds('other')), 't2');
    c.invalidate(creds('a:b%c d'), 't1');
    c.invalidate(creds('a:b%c d'), 't1');
    assert.equal(await c.token(creds('a:b%c d')), 't3');
    c.invalidate(creds('a:b%c d'), 't1');
    assert.equal(await c.token(creds('a:b%c d')), 't3', 'a stale refusal does not drop the new token');
    await c.close();
  });

  it('renews a token shortly before it expires', async () => {
    seen = [];
    let now = 1_000_000;
    answer = (n) => ({ status: 200, body: JSON.stringify({ access_token: `e${n}`, expires_in: 100 }) });
    const c = new TokenClient({ dispatcher: loopback(), now: () => now });
    assert.equal(await c.token(creds()), 'e1');
    now += 89_000;
    assert.equal(await c.token(creds()), 'e1');
    now += 2_000;
    assert.equal(await c.token(creds()), 'e2', 'renewed a tenth of its lifetime before the end');
    await c.close();
  });

  it('names what the token endpoint said, without the query of its URL', async () => {
    answer = () => ({
      status: 401,
      body: JSON.stringify({ error: 'invalid_client', error_description: 'no such client' }),
    });
    const c = new TokenClient({ dispatcher: loopback() });
    const base = url.replace(/\?.*$/, '');
    await assert.rejects(c.token(creds()), {
      message: `token endpoint ${base} answered 401 invalid_client (no such client)`,
    });
    answer = () => ({ status: 502, body: '<html>bad gateway</html>' });
    await assert.rejects(c.token(creds()), { message: `token endpoint ${base} answered 502` });
    answer = () => ({ status: 200, body: '{}' });
    await assert.rejects(c.token(creds()), /answered 200 without an access_token/);
    await c.close();
  });

  it('names an endpoint it cannot reach, and one the address policy refuses', async () => {
    const c = new TokenClient({ dispatcher: loopback() });
    const down = `http://127.0.0.1:${await closedPort()}/token`;
    await assert.rejects(
      c.token({ ...creds(), TokenUrl: down }),
      new RegExp(`token endpoint ${down} could not be reached`),
    );
    const strict = new TokenClient({ dispatcher: createPinnedDispatcher(new AddressPolicy([])) });
    await assert.rejects(strict.token(creds()), /could not be reached: refused to connect/);
    await c.close();
    await strict.close();
  });
});
