import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook, type Receiver, startReceiver } from '../helpers/servers.js';

const ROOT = '/_hookd/console';

async function signIn(url: string, token: string): Promise<string> {
  const form = await fetch(`${url}${ROOT}/signin`);
  const pre = form.headers.getSetCookie()[0]!.split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const res = await fetch(`${url}${ROOT}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, token }),
  });
  return res.headers.getSetCookie()[0]!.split(';')[0]!;
}

const figure = (page: string, name: string) => new RegExp(`data-figure="${name}">(\\d+)<`).exec(page)?.[1];

describe('console overview and notification deliveries', () => {
  let d: TestDaemon;
  let gone: Receiver;
  let inbox: Receiver;

  before(async () => {
    gone = await startReceiver({ status: 410 });
    inbox = await startReceiver();
    d = await startHookd();
  });

  after(async () => {
    await d?.close();
    await gone?.close();
    await inbox?.close();
  });

  it('"Delivered" counts hook deliveries only; notification deliveries are named apart', async () => {
    const ne = await api(d.url, d.token, 'POST', '/_hookd/notifications', {
      Url: `${inbox.url}/n`,
      Events: ['hook.disabled'],
    });
    assert.equal(ne.status, 201, ne.text);
    await createHook(d, { PathPattern: '/gone', Methods: ['GET'], Type: 1, Callback: `${gone.url}/g` });
    const fired = await api(d.url, d.token, 'POST', '/_hookd/report', {
      Method: 'GET',
      Path: '/gone',
      StatusCode: 200,
    });
    assert.equal(fired.status, 202, fired.text);
    await inbox.waitFor(1, 15_000);
    // The console answers on its own listener, not on the proxied origin.
    const cookie = await signIn(d.consoleUrl, d.token);
    let page = '';
    for (let t = Date.now(); Date.now() - t < 15_000; ) {
      page = await (await fetch(`${d.consoleUrl}${ROOT}/`, { headers: { cookie } })).text();
      if (/Not counted: 1 notification delivery/.test(page) && figure(page, 'failed') === '1') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.match(page, /Not counted: 1 notification delivery/);
    assert.equal(figure(page, 'failed'), '1', 'the hook delivery the receiver answered 410');
    assert.equal(figure(page, 'delivered'), '0', 'the notification delivery is not one of the hooks');
  });
});
