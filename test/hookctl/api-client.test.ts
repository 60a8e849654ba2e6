import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ApiClient, nextLink } from '../../src/hookctl/api-client.js';
import { ApiError, AuthError, UnreachableError } from '../../src/hookctl/exit-codes.js';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';
import { closedPort } from './helpers.js';

const HOOK = { PathPattern: '/a/(*)', Methods: ['GET'], Callback: 'http://127.0.0.1:9/cb' };

describe('ApiClient against hookd with --api-base /api', () => {
  let daemon: TestDaemon;
  let client: ApiClient;
  const ids: string[] = [];

  before(async () => {
    daemon = await startHookd({ apiBase: '/api' });
    client = new ApiClient({ server: `${daemon.url}/api/`, token: daemon.token, tokenSource: 'test' });
    for (let i = 0; i < 3; i++) ids.push((await client.createHook(HOOK)).Id);
  });

  after(async () => {
    await client.close();
    await daemon.close();
  });

  it('follows Link: rel="next" across pages, resolving the link against the server', async () => {
    const all = await client.listHooks(Number.POSITIVE_INFINITY, 1);
    assert.deepEqual(
      all.map((h) => h.Id),
      ids,
    );
  });

  it('stops at max items', async () => {
    const two = await client.listHooks(2, 1);
    assert.deepEqual(
      two.map((h) => h.Id),
      ids.slice(0, 2),
    );
  });

  it('turns problem+json into ApiError with the field errors', async () => {
    await assert.rejects(client.createHook({ Methods: [] }), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.status, 400);
      assert.equal(e.problem.code, 'VALIDATION_FAILED');
      assert.ok(e.problem.errors!.some((x) => x.field === 'PathPattern'));
      return true;
    });
  });

  it('a 401 without a configured token becomes the "no token found" error', async () => {
    const missing = new AuthError('no API token; looked at: …');
    const anon = new ApiClient({
      server: `${daemon.url}/api`,
      token: undefined,
      tokenSource: 'nowhere',
      missingToken: missing,
    });
    try {
      await assert.rejects(anon.listHooks(), (e: unknown) => e === missing);
    } finally {
      await anon.close();
    }
  });
});

describe('ApiClient against things that are not hookd', () => {
  it('a connection refused is UnreachableError naming the server', async () => {
    const port = await closedPort();
    const c = new ApiClient({ server: `http://127.0.0.1:${port}`, token: 't', tokenSource: 'test' });
    await assert.rejects(
      c.hookTypes(),
      (e: unknown) => e instanceof UnreachableError && e.url === `http://127.0.0.1:${port}`,
    );
    await c.close();
  });

  it('an HTML page instead of JSON is an ApiError that asks whether --server is right', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/hooktypes')
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>');
      else res.writeHead(502, { 'content-type': 'text/html' }).end('<html><h1>Bad gateway</h1></html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const c = new ApiClient({
      server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      token: 't',
      tokenSource: 'test',
    });
    try {
      await assert.rejects(
        c.hookTypes(),
        (e: unknown) => e instanceof ApiError && /not JSON/.test(e.message) && /--server/.test(e.hint ?? ''),
      );
      await assert.rejects(
        c.listHooks(),
        (e: unknown) => e instanceof ApiError && e.status === 502 && /Bad gateway/.test(e.message),
      );
    } finally {
      await c.close();
      server.close();
    }
  });
});

describe('nextLink', () => {
  it('finds rel="next" among several links, in any form', () => {
    assert.equal(nextLink('</hooks?limit=2&after=hk_b>; rel="next"'), '/hooks?limit=2&after=hk_b');
    assert.equal(nextLink('</p1>; rel="prev", </p3>; rel=next'), '/p3');
    assert.equal(nextLink(['</x>; rel="prev"', '</y>; rel="last next"']), '/y');
    assert.equal(nextLink('</x>; rel="prev"'), undefined);
    assert.equal(nextLink(undefined), undefined);
  });
});
