import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HeaderHygiene, setsOwnCookie } from '../../src/edge/index.js';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';
import { rawClient, statusLines } from '../helpers/raw-client.js';
import { send, startUpstream, type Upstream } from '../helpers/servers.js';

// The identity header in CGI spellings, Forwarded and X-Real-IP from
// untrusted peers; and the console's cookies set by the upstream.

const SPELLINGS = [
  'X-Forwarded-User',
  'x_forwarded_user',
  'X_Forwarded_User',
  'X-Forwarded_User',
  'X_FORWARDED-USER',
];

describe('HeaderHygiene', () => {
  const h = new HeaderHygiene('x-forwarded-user');

  it('drops every spelling of the identity header from an untrusted peer', () => {
    for (const s of SPELLINGS) assert.equal(h.drops(s.toLowerCase(), false), true, s);
  });

  it('from a trusted proxy: the canonical spelling is kept, `_` spellings are not', () => {
    assert.equal(h.drops('x-forwarded-user', true), false);
    assert.equal(h.drops('x_forwarded_user', true), true);
    assert.equal(h.drops('x_forwarded_for', true), true);
    assert.equal(h.drops('forwarded', true), false);
    assert.equal(h.drops('x-real-ip', true), false);
  });

  it('Forwarded, X-Real-IP, True-Client-IP go from untrusted peers; ordinary headers stay', () => {
    for (const n of ['forwarded', 'x-real-ip', 'true-client-ip', 'x_real_ip', 'x_forwarded_host'])
      assert.equal(h.drops(n, false), true, n);
    for (const n of ['accept', 'x-request-id', 'my_header', 'x-forwarded-for'])
      assert.equal(h.drops(n, false), false, n);
  });

  it('without an identity header, its spellings are ordinary headers', () => {
    assert.equal(new HeaderHygiene().drops('x_forwarded_user', false), false);
  });

  it('hookd_ cookies are recognised, prefixed or not, any case; others are not', () => {
    for (const v of ['hookd_console=x; Path=/', 'HOOKD_SIGNIN=1', '__Host-hookd_console=x', ' hookd_new=1'])
      assert.equal(setsOwnCookie(v), true, v);
    for (const v of ['app=1', 'session=hookd_console', 'myhookd_console=1'])
      assert.equal(setsOwnCookie(v), false, v);
  });
});

describe('header hygiene through the proxy', () => {
  let upstream: Upstream;
  let edge: TestDaemon;
  let behind: TestDaemon;

  before(async () => {
    upstream = await startUpstream((req, res, seen) => {
      req.resume();
      req.on('end', () => {
        const extra =
          seen.url === '/cookies'
            ? { 'set-cookie': ['hookd_console=planted; Path=/', 'app=1; Path=/', 'hookd_signin=x'] }
            : {};
        res.writeHead(200, { 'content-type': 'text/plain', ...extra }).end('ok');
      });
    });
    // The test client (127.0.0.1) is an untrusted peer of `edge`, and the trusted proxy of `behind`.
    edge = await startHookd({
      upstream: upstream.url,
      identityHeader: 'X-Forwarded-User',
      trustedProxies: ['127.0.0.2'],
    });
    behind = await startHookd({
      upstream: upstream.url,
      identityHeader: 'X-Forwarded-User',
      trustedProxies: ['127.0.0.1'],
    });
  });
  after(async () => {
    await edge?.close();
    await behind?.close();
    await upstream?.close();
  });

  /** One raw request (so that header spellings go as written), answered; the upstream's view. */
  async function viaRaw(d: TestDaemon, lines: string[], upgrade = false) {
    upstream.reset();
    const c = await rawClient(d.url);
    const up = upgrade ? 'Upgrade: websocket\r\nConnection: Upgrade\r\n' : '';
    c.write(`GET /h HTTP/1.1\r\nHost: h\r\n${up}${lines.map((l) => `${l}\r\n`).join('')}\r\n`);
    await c.waitFor((t) => statusLines(t).length === 1);
    c.close();
    assert.equal(upstream.requests.length, 1);
    return upstream.requests[0]!;
  }

  for (const upgrade of [false, true]) {
    const kind = upgrade ? 'upgrade' : 'plain';
    it(`${kind}: every spelling of the identity header is dropped from an untrusted peer`, async () => {
      const r = await viaRaw(edge, [...SPELLINGS.map((s) => `${s}: admin`), 'X-Other: kept'], upgrade);
      for (let i = 0; i < r.rawHeaders.length; i += 2) {
        assert.notEqual(
          r.rawHeaders[i]!.toLowerCase().replaceAll('_', '-'),
          'x-forwarded-user',
          r.rawHeaders[i],
        );
      }
      assert.equal(r.headers['x-other'], 'kept');
    });

    it(`${kind}: Forwarded, X-Real-IP and True-Client-IP from an untrusted peer are dropped; X-Forwarded-For is the peer`, async () => {
      const r = await viaRaw(
        edge,
        [
          'Forwarded: for=10.6.6.6;proto=https',
          'X-Real-IP: 10.6.6.6',
          'True-Client-IP: 10.6.6.6',
          'X_Forwarded_For: 10.6.6.6',
          'X-Forwarded-For: 10.6.6.6',
        ],
        upgrade,
      );
      assert.equal(r.headers.forwarded, undefined);
      assert.equal(r.headers['x-real-ip'], undefined);
      assert.equal(r.headers['true-client-ip'], undefined);
      assert.equal(r.headers.x_forwarded_for, undefined);
      assert.equal(r.headers['x-forwarded-for'], '127.0.0.1');
    });

    it(`${kind}: from a trusted proxy they are kept (and the identity header in its own spelling)`, async () => {
      const r = await viaRaw(
        behind,
        [
          'Forwarded: for=10.1.1.1',
          'X-Real-IP: 10.1.1.1',
          'X-Forwarded-User: alice',
          'X_Forwarded_User: mallory',
        ],
        upgrade,
      );
      assert.equal(r.headers.forwarded, 'for=10.1.1.1');
      assert.equal(r.headers['x-real-ip'], '10.1.1.1');
      assert.equal(r.headers['x-forwarded-user'], 'alice');
      assert.equal(r.headers.x_forwarded_user, undefined);
    });
  }

  it("the upstream's Set-Cookie for hookd's own cookies never reaches the client; its own do", async () => {
    const res = await send(`${edge.url}/cookies`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.headers['set-cookie'], ['app=1; Path=/']);
  });

  it('the same on an upgrade the upstream answered without switching', async () => {
    const c = await rawClient(edge.url);
    c.write('GET /cookies HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    await c.waitFor((t) => statusLines(t).length === 1 && t.endsWith('ok\r\n0\r\n\r\n'));
    c.close();
    assert.match(c.received(), /Set-Cookie: app=1; Path=\//i);
    assert.doesNotMatch(c.received(), /hookd_/);
  });
});
