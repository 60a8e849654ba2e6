import assert from 'node:assert/strict';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';
import { rawClient, statusLines } from '../helpers/raw-client.js';
import {
  createHook,
  type Receiver,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';

// An Upgrade request must not turn the client's connection into a raw pipe
// before the upstream says 101. The upstream here is a plain Node server that answers 200 to
// everything (as most REST servers do) and records exactly what it received.

const UPGRADE = 'GET /x HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n';
const SMUGGLED =
  'GET /smuggled HTTP/1.1\r\nHost: h\r\nX-Forwarded-User: admin\r\nX_Forwarded_User: admin\r\n' +
  'X-Forwarded-For: 10.6.6.6\r\nForwarded: for=10.6.6.6\r\nX-Real-IP: 10.6.6.6\r\n\r\n';

describe('upgrades: no smuggling past the proxy', () => {
  let upstream: Upstream;
  let receiver: Receiver;
  let d: TestDaemon;

  before(async () => {
    upstream = await startUpstream();
    receiver = await startReceiver();
    d = await startHookd({ upstream: upstream.url, identityHeader: 'X-Forwarded-User' });
    await createHook(d, {
      PathPattern: '/smuggled',
      Methods: ['GET'],
      Callback: `${receiver.url}/cb`,
      CallbackContent: '$REQUEST_METHOD $REQUEST_PATH',
    });
  });
  after(async () => {
    await d?.close();
    await upstream?.close();
    await receiver?.close();
  });

  /** The request the upstream saw for a path (the test fails if it saw none or several). */
  function seen(path: string) {
    const all = upstream.requests.filter((r) => r.url === path);
    assert.equal(
      all.length,
      1,
      `upstream requests for ${path}: ${JSON.stringify(upstream.requests.map((r) => r.url))}`,
    );
    return all[0]!;
  }

  function assertTreated(r: ReturnType<typeof seen>): void {
    assert.equal(r.headers['x-forwarded-user'], undefined);
    assert.equal(r.headers.x_forwarded_user, undefined);
    assert.equal(r.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(r.headers.forwarded, undefined);
    assert.equal(r.headers['x-real-ip'], undefined);
  }

  it("the issue's commands: a 200 to the upgrade is relayed, the next request is parsed, treated and fires its hook", async () => {
    upstream.reset();
    receiver.reset();
    const c = await rawClient(d.url);
    c.write(UPGRADE);
    await c.waitFor((t) => statusLines(t).length === 1 && t.includes('"url":"/x"'));
    assert.match(c.received(), /^HTTP\/1\.1 200 OK\r\n/);
    c.write(SMUGGLED);
    await c.waitFor((t) => statusLines(t).length === 2 && t.includes('"url":"/smuggled"'));
    c.close();
    assert.equal(seen('/x').headers.upgrade, 'websocket', 'the upgrade request itself is forwarded as one');
    assertTreated(seen('/smuggled'));
    const [cb] = await receiver.waitFor(1);
    assert.equal(cb!.body, 'GET /smuggled');
  });

  it('the next request sent at once, before the upstream answered: still parsed, not piped', async () => {
    upstream.reset();
    const c = await rawClient(d.url);
    c.write(UPGRADE + SMUGGLED);
    await c.waitFor((t) => statusLines(t).length === 2);
    c.close();
    assert.deepEqual(
      upstream.requests.map((r) => r.url),
      ['/x', '/smuggled'],
    );
    assertTreated(seen('/smuggled'));
  });

  it('h2c: served as plain HTTP/1.1 (Upgrade and HTTP2-Settings removed), and the connection stays HTTP/1.1', async () => {
    upstream.reset();
    const c = await rawClient(d.url);
    c.write(
      'GET /h2 HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n' +
        'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\nX-Real-IP: 10.6.6.6\r\n\r\n',
    );
    await c.waitFor((t) => statusLines(t).length === 1);
    c.write(SMUGGLED);
    await c.waitFor((t) => statusLines(t).length === 2);
    c.close();
    const h2 = seen('/h2');
    assert.equal(h2.headers.upgrade, undefined);
    assert.equal(h2.headers['http2-settings'], undefined);
    assert.equal(h2.headers['x-real-ip'], undefined);
    assert.doesNotMatch(c.received(), /101 Switching/);
    assertTreated(seen('/smuggled'));
  });

  it('an Upgrade request with a body is served as a plain request: the body is its body, not a tunnel', async () => {
    upstream.reset();
    const c = await rawClient(d.url);
    c.write(
      'POST /b HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nContent-Length: 5\r\n\r\nhello' +
        SMUGGLED,
    );
    await c.waitFor((t) => statusLines(t).length === 2);
    c.close();
    const b = seen('/b');
    assert.equal(b.headers.upgrade, undefined);
    assert.equal(b.body?.toString(), 'hello');
    assertTreated(seen('/smuggled'));
  });

  it('Connection: close on the upgrade request: the relayed answer ends the connection', async () => {
    upstream.reset();
    const c = await rawClient(d.url);
    c.write('GET /x HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade, close\r\n\r\n');
    await c.closed;
    assert.match(c.received(), /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(c.received(), /\r\nConnection: close\r\n/i);
    assert.deepEqual(
      upstream.requests.map((r) => r.url),
      ['/x'],
    );
  });
});

describe('upgrades: a real 101 becomes a tunnel, and only then', () => {
  let raw: Server;
  /** What the upstream received before it answered 101, and after. */
  let before101 = '';
  let after101 = '';
  let d: TestDaemon;
  let receiver: Receiver;

  before(async () => {
    receiver = await startReceiver();
    raw = createServer((s: Socket) => {
      let switched = false;
      s.on('data', (b: Buffer) => {
        if (switched) {
          after101 += b.toString('latin1');
          s.write(b); // echo
          return;
        }
        before101 += b.toString('latin1');
        if (before101.includes('\r\n\r\n')) {
          // Answer a moment later: bytes the client sent meanwhile must wait at hookd.
          setTimeout(() => {
            switched = true;
            s.write(
              'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
                'Set-Cookie: hookd_console=planted; Path=/\r\nSet-Cookie: app=1\r\n\r\n',
            );
          }, 100);
        }
      });
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    d = await startHookd({ upstream: `http://127.0.0.1:${(raw.address() as AddressInfo).port}` });
    // Both kinds: BeforeCompletion on arrival, AfterCompletion once the upstream said 101.
    for (const Type of [0, 1]) {
      await createHook(d, {
        PathPattern: '/ws',
        Methods: ['GET'],
        Type,
        Callback: `${receiver.url}/cb`,
        CallbackContent: `${Type} $STATUS_CODE`,
      });
    }
  });
  after(async () => {
    await d?.close();
    await receiver?.close();
    await new Promise<void>((r) => raw.close(() => r()));
  });

  it('bytes sent before the 101 reach the upstream only after it; then both ways; hooks fire; no hookd cookie', async () => {
    const c = await rawClient(d.url);
    c.write(`GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nearly`);
    await c.waitFor((t) => t.includes('\r\n\r\nearly'));
    c.write('later');
    await c.waitFor((t) => t.endsWith('earlylater'));
    c.close();
    assert.match(before101, /^GET \/ws HTTP\/1\.1\r\n/);
    assert.ok(
      before101.endsWith('\r\n\r\n'),
      `before the 101 the upstream got only the head: ${JSON.stringify(before101)}`,
    );
    assert.equal(after101, 'earlylater');
    assert.match(c.received(), /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    assert.match(c.received(), /Set-Cookie: app=1/);
    assert.doesNotMatch(c.received(), /hookd_console/);
    const calls = await receiver.waitFor(2);
    assert.deepEqual(calls.map((x) => x.body).sort(), ['0 ', '1 101']);
  });
});
