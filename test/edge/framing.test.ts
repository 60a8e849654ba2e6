import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';
import { rawClient, statusLines } from '../helpers/raw-client.js';
import {
  createHook,
  firedCalls,
  fireMark,
  type Receiver,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';

// Request smuggling by framing: a request whose length is said two ways that disagree (both
// Content-Length and Transfer-Encoding, or two different Content-Lengths, or a chunked encoding
// that is not last) is refused at the proxy with 400 and the connection closed. Nothing of it,
// nor of what was smuggled behind it, reaches the upstream or fires a hook.

describe('conflicting request framing at the proxy', () => {
  let upstream: Upstream;
  let receiver: Receiver;
  let d: TestDaemon;

  before(async () => {
    upstream = await startUpstream();
    receiver = await startReceiver();
    d = await startHookd({ upstream: upstream.url });
    await createHook(d, {
      PathPattern: '/framed/(*)',
      Methods: ['POST', 'GET'],
      Callback: `${receiver.url}/cb`,
      CallbackContent: '$REQUEST_METHOD $REQUEST_PATH',
    });
  });
  after(async () => {
    await d?.close();
    await upstream?.close();
    await receiver?.close();
  });

  const smuggled = 'GET /framed/smuggled HTTP/1.1\r\nHost: x\r\n\r\n';
  const cases: [string, string][] = [
    [
      'Content-Length and Transfer-Encoding: chunked',
      `POST /framed/cl-te HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`,
    ],
    [
      'two different Content-Lengths',
      `POST /framed/cl-cl HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`,
    ],
    [
      'a chunked encoding that is not the last one',
      `POST /framed/te-te HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\nContent-Length: 5\r\n\r\n0\r\n\r\n${smuggled}`,
    ],
  ];

  for (const [name, bytes] of cases) {
    it(`${name}: 400, the connection closed, nothing forwarded or fired`, async () => {
      const before = upstream.requests.length;
      const mark = await fireMark(d.opsUrl, receiver);
      const c = await rawClient(d.url);
      c.write(bytes);
      await c.closed;
      const answers = statusLines(c.received());
      assert.deepEqual(answers, ['HTTP/1.1 400 Bad Request'], c.received());
      // A request after it, on a new connection: once its hook fired, the refused one would have too.
      const after = await rawClient(d.url);
      after.write('GET /framed/marker HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await after.closed;
      assert.match(after.received(), /^HTTP\/1\.1 200 /);
      const calls = await firedCalls(d.opsUrl, receiver, mark);
      assert.deepEqual(
        calls.slice(mark.calls).map((x) => x.body),
        ['GET /framed/marker'],
        'only the marker fired',
      );
      assert.deepEqual(
        upstream.requests.slice(before).map((r) => r.url),
        ['/framed/marker'],
        'the upstream saw only the marker',
      );
    });
  }
});
