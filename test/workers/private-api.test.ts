import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { PEER_HEADER, SECRET_HEADER } from '../../src/workers/messages.js';
import { guardPrivateApi } from '../../src/workers/private-api.js';

// The primary's private listener: only a worker (holding the per-boot secret) gets through, and
// then the request's peer is the client the worker saw, not the worker.
describe("the primary's private API listener", () => {
  it('refuses requests without the secret and gives admitted ones the client address', async () => {
    const seen: { peer: string | undefined; headers: string[] }[] = [];
    const server = createServer((req, res) => {
      seen.push({ peer: req.socket.remoteAddress, headers: Object.keys(req.headers) });
      res.end('ok');
    });
    const secret = 'a'.repeat(64);
    guardPrivateApi(server, secret);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const get = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/hooks', headers, agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      assert.equal(await get({}), 403);
      assert.equal(await get({ [SECRET_HEADER]: 'b'.repeat(64), [PEER_HEADER]: '203.0.113.9' }), 403);
      assert.equal(await get({ [SECRET_HEADER]: secret.slice(1), [PEER_HEADER]: '203.0.113.9' }), 403);
      assert.equal(seen.length, 0, 'nothing refused reached the app');
      assert.equal(await get({ [SECRET_HEADER]: secret, [PEER_HEADER]: '203.0.113.9' }), 200);
      assert.equal(seen[0]!.peer, '203.0.113.9');
      assert.ok(!seen[0]!.headers.includes(SECRET_HEADER) && !seen[0]!.headers.includes(PEER_HEADER));
    } finally {
      server.close();
    }
  });
});
