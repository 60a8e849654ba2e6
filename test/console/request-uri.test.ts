import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook, type Receiver, startReceiver } from '../helpers/servers.js';

// The console's "Send a test event" and its dry run render `$REQUEST_URI` as a request to the
// proxy would have it: publicBaseUrl, else the proxy listener, never the console's own address
// (which proxies nothing).

const ROOT = '/_hookd/console';

async function session(consoleUrl: string, token: string) {
  const form = await fetch(`${consoleUrl}${ROOT}/signin`);
  const pre = form.headers.getSetCookie()[0]!.split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const res = await fetch(`${consoleUrl}${ROOT}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, token }),
  });
  const cookie = res.headers.getSetCookie()[0]!.split(';')[0]!;
  const page = await (await fetch(`${consoleUrl}${ROOT}/`, { headers: { cookie } })).text();
  const token2 = /name="csrf-token" content="([^"]+)"/.exec(page)![1]!;
  return (path: string, fields: Record<string, string> = {}) =>
    fetch(`${consoleUrl}${ROOT}${path}`, {
      method: 'POST',
      headers: {
        cookie,
        'hx-request': 'true',
        'x-csrf-token': token2,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams(fields),
    });
}

let receiver: Receiver;
before(async () => {
  receiver = await startReceiver();
});
after(async () => {
  await receiver?.close();
});

async function check(d: TestDaemon, expectedBase: string): Promise<void> {
  const hook = await createHook(d, {
    PathPattern: '/repositories/(*)',
    Methods: ['GET'],
    Callback: `${receiver.url}/uri`,
    CallbackContent: '{"uri": "$REQUEST_URI"}',
  });
  const post = await session(d.consoleUrl, d.token);
  receiver.reset();
  const sent = await post(`/hooks/${hook.Id}/test`);
  assert.equal(sent.status, 200, await sent.text());
  const [call] = await receiver.waitFor(1);
  assert.equal((JSON.parse(call!.body) as { uri: string }).uri, `${expectedBase}/repositories/test`);

  const dry = await (await post('/hooks/dry-run', { Method: 'GET', Path: '/repositories/r1?x=1' })).text();
  assert.ok(dry.includes(`${expectedBase}/repositories/r1?x=1`), dry);
  assert.ok(!dry.includes(d.consoleUrl), 'the console address is not the request URI');
}

describe('$REQUEST_URI of console test events and dry runs', () => {
  it('without publicBaseUrl: the proxy listener, not the console', async () => {
    const d = await startHookd();
    try {
      assert.notEqual(new URL(d.consoleUrl).port, new URL(d.url).port);
      await check(d, d.url);
    } finally {
      await d.close();
    }
  });

  it('with publicBaseUrl: that', async () => {
    const d = await startHookd({ publicBaseUrl: 'https://data.example.com' });
    try {
      await check(d, 'https://data.example.com');
    } finally {
      await d.close();
    }
  });
});
