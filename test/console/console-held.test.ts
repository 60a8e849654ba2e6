import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { until } from '../helpers/until.js';

// The console shows what is held back behind what (HeldBehind, HeldBy) and a hook whose
// callback origin has not agreed to the verification handshake as `unverified`, as the API does.

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

describe('console: held deliveries and unverified hooks', () => {
  let d: TestDaemon;
  let rcvUrl = '';
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    // Refuses the CloudEvents handshake; fails A-1 every time so that A-2 stays held behind it.
    if (req.method === 'OPTIONS') return void res.writeHead(403).end();
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(body === 'A-1' ? 500 : 200).end();
    });
  });
  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    rcvUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    d = await startHookd({ callbackVerification: 'cloudevents' });
  });
  after(async () => {
    await d?.close();
    server.closeAllConnections();
    server.close();
  });

  it('links a held delivery to the delivery it waits behind, and shows an unverified hook', async () => {
    const ordered = await api<{ Id: string }>(d.url, d.token, 'POST', '/hooks', {
      PathPattern: '/ord/(*)/(*)',
      Methods: ['GET'],
      Type: 1,
      Callback: `${rcvUrl}/ord`,
      CallbackContent: '$1-$2',
      CallbackContentMediaType: 'text/plain',
      Ordering: { Key: '$1' },
      Verification: 'off',
      RetrySchedule: [0, 60],
    });
    assert.equal(ordered.status, 201, ordered.text);
    const unverified = await api<{ Id: string; State: string }>(d.url, d.token, 'POST', '/hooks', {
      PathPattern: '/v/*',
      Methods: ['GET'],
      Callback: `${rcvUrl}/cb`,
    });
    assert.equal(unverified.status, 201, unverified.text);
    assert.equal(unverified.body.State, 'unverified');

    await api(d.url, d.token, 'POST', '/_hookd/report', [
      { Method: 'GET', Path: '/ord/A/1', StatusCode: 200, Phase: 'after' },
      { Method: 'GET', Path: '/ord/A/2', StatusCode: 200, Phase: 'after' },
    ]);
    await until('the first failure of A-1', () => bodies.includes('A-1'));
    let held: { Id: string; HeldBehind?: string } | undefined;
    await until('a delivery held behind A-1', async () => {
      const list = await api<{ Id: string; HeldBehind?: string }[]>(
        d.url,
        d.token,
        'GET',
        `/hooks/${ordered.body.Id}/deliveries?status=pending`,
      );
      held = list.body.find((x) => x.HeldBehind !== undefined);
      return held !== undefined;
    });

    const cookie = await signIn(d.consoleUrl!, d.token);
    const page = await (
      await fetch(`${d.consoleUrl}${ROOT}/deliveries/${held!.Id}`, { headers: { cookie } })
    ).text();
    assert.match(page, /Held behind/);
    assert.ok(
      page.includes(`href="${ROOT}/deliveries/${held!.HeldBehind}"`),
      `links to the head ${held!.HeldBehind}`,
    );
    assert.ok(page.includes(`order behind ${held!.HeldBehind}`), 'and says why (HeldBy)');
    const hookPage = await (
      await fetch(`${d.consoleUrl}${ROOT}/hooks/${unverified.body.Id}`, { headers: { cookie } })
    ).text();
    assert.match(hookPage, /<dt>State<\/dt><dd>[^\n]*unverified/);
    const orderedPage = await (
      await fetch(`${d.consoleUrl}${ROOT}/hooks/${ordered.body.Id}`, { headers: { cookie } })
    ).text();
    assert.match(orderedPage, /<dt>Ordering key<\/dt><dd><code>\$1<\/code>/);
    assert.ok(
      orderedPage.includes(`class="badge held" href="${ROOT}/deliveries/${held!.HeldBehind}"`),
      'the log row of the held delivery links to its head',
    );
    const list = await (await fetch(`${d.consoleUrl}${ROOT}/hooks`, { headers: { cookie } })).text();
    assert.match(list, /unverified/);
  });
});
