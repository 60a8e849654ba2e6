import assert from 'node:assert/strict';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';
import { send, startUpstream, type Upstream } from '../helpers/servers.js';

// `--identity-header` with no trusted peer on this connection (the tests' client is 127.0.0.1,
// the trusted proxy 127.0.0.2): the header is dropped from plain requests and from upgrades.

describe('the guarded identity header is not forwarded from an untrusted peer', () => {
  let upstream: Upstream;
  let raw: Server;
  const heads: string[] = [];
  let plain: TestDaemon;
  let upgrades: TestDaemon;

  before(async () => {
    upstream = await startUpstream();
    // A raw upstream for upgrades: records the request head, answers 101 and closes.
    raw = createServer((s: Socket) => {
      let head = '';
      s.on('data', (b: Buffer) => {
        head += b.toString('latin1');
        if (head.includes('\r\n\r\n')) {
          heads.push(head);
          s.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
        }
      });
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    const common = { identityHeader: 'X-Forwarded-User', trustedProxies: ['127.0.0.2'] };
    plain = await startHookd({ upstream: upstream.url, ...common });
    upgrades = await startHookd({
      upstream: `http://127.0.0.1:${(raw.address() as AddressInfo).port}`,
      ...common,
    });
  });
  after(async () => {
    await plain?.close();
    await upgrades?.close();
    await upstream?.close();
    await new Promise<void>((r) => raw.close(() => r()));
  });

  it('plain requests: dropped from an untrusted peer, other headers kept', async () => {
    upstream.reset();
    await send(`${plain.url}/x`, { headers: { 'X-Forwarded-User': 'alice', 'X-Other': 'kept' } });
    assert.equal(upstream.requests[0]!.headers['x-forwarded-user'], undefined);
    assert.equal(upstream.requests[0]!.headers['x-other'], 'kept');
  });

  it('upgrades: dropped too', async () => {
    const { port } = new URL(upgrades.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const c = connect({ host: '127.0.0.1', port: Number(port) }, () => {
        c.write(
          'GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
            'X-Forwarded-User: alice\r\nX-Other: kept\r\n\r\n',
        );
      });
      let got = '';
      c.on('data', (b: Buffer) => {
        got += b.toString('latin1');
      });
      c.on('close', () => resolve(got));
      c.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1.1 101/);
    assert.equal(heads.length, 1);
    assert.doesNotMatch(heads[0]!, /x-forwarded-user/i);
    assert.match(heads[0]!, /X-Other: kept/);
  });
});
