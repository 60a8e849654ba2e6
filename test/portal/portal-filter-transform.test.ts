import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { chromiumSkipReason, launchBrowser, type TestBrowser } from '../console/browser.js';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { addUser, portalLink, type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// The portal's hook editor, in real Chromium, signed in by a portal link: a user writes a Filter
// and a Transform, sees their mistakes beside the fields as they type, tries a request in the
// "try it" box, saves, and the hook page shows both and the filter's last evaluation error.

// biome-ignore lint/suspicious/noExplicitAny: code that runs in the page
declare const document: any;

const skip = chromiumSkipReason();
const P = '/_hookd/portal';

describe('portal editor: Filter and Transform, in Chromium', { skip, timeout: 180_000 }, () => {
  let d: TestDaemon;
  let receiver: Receiver;
  let browser: TestBrowser;
  let page: Page;
  let aliceToken: string;

  before(async () => {
    receiver = await startReceiver();
    // The sandbox's wall-time limit is not what this test is about: a run's wall time counts the
    // moments its thread waits for a core, which Chromium and the suite share here.
    d = await startHookd({ transformTimeLimit: 5000 });
    aliceToken = await addUser(d, 'alice');
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });
  after(async () => {
    await browser?.close();
    await d?.close();
    await receiver?.close();
  });

  const slot = (field: string) =>
    page.evaluate((f: string) => document.getElementById(`err-${f}`)?.textContent ?? '', field);

  it('inline errors for both fields, the try-it box, then the saved hook shows them', async () => {
    const link = await portalLink(d, 'alice');
    assert.equal(link.status, 201, link.text);
    await page.goto(link.body.Url);
    await page.waitForURL(/\/_hookd\/portal\/hooks/);
    await page.goto(`${d.consoleUrl}${P}/hooks/new`);
    await page.waitForSelector('#f-Filter');
    await page.waitForSelector('#f-Transform');
    await page.fill('#f-PathPattern', '/repositories/(*)/data');
    await page.fill('#f-Callback', `${receiver.url}/chat`);
    await page.fill('#f-Filter', 'requst.body.quality == "bad"');
    await until('the Filter error shows beside the field', async () =>
      /undeclared reference to 'requst' at 1:1; did you mean 'request'\?/.test(await slot('Filter')),
    );
    await page.fill('#f-Transform', 'function transform(event) {\n  return { payload: };\n}');
    await until('the Transform error shows beside the field', async () =>
      /SyntaxError: .* at 2:\d+/.test(await slot('Transform')),
    );
    await page.fill('#f-Filter', 'request.body.quality == "bad"');
    await page.fill(
      '#f-Transform',
      'function transform(event) {\n  return { payload: { text: "bad reading in " + event.captures[0] } };\n}',
    );
    await until(
      'both errors are gone',
      async () => (await slot('Filter')) === '' && (await slot('Transform')) === '',
    );

    // Try it: a request whose body the filter selects, then one it does not.
    await page.fill('#dr-method', 'PUT');
    await page.fill('#dr-path', '/repositories/r7/data');
    await page.fill('#dr-status', '200');
    await page.fill('#dr-headers', 'Content-Type: application/json');
    await page.fill('#dr-body', '{"quality": "bad"}');
    await page.click('section[aria-labelledby="h-dry"] button[type=submit]');
    await page.waitForSelector('#dry-result :text("Filter: matched")');
    assert.match((await page.textContent('#dry-result'))!, /bad reading in r7/);
    await page.fill('#dr-body', '{"quality": "good"}');
    await page.click('section[aria-labelledby="h-dry"] button[type=submit]');
    await page.waitForSelector('#dry-result :text("no match")');
    assert.equal(receiver.calls.length, 0, 'the dry run sends nothing');

    await page.click('#hook-form button[type=submit]');
    await page.waitForURL(/\/hooks\/hk_[^/]+$/);
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const stored = await api<{ Owner: string; Filter: string; Transform: string }>(
      d.url,
      aliceToken,
      'GET',
      `/hooks/${id}`,
    );
    assert.equal(stored.body.Owner, 'alice', stored.text);
    assert.equal(stored.body.Filter, 'request.body.quality == "bad"');
    assert.match(stored.body.Transform, /bad reading in/);
    assert.match((await page.textContent('.hook-code'))!, /request\.body\.quality == "bad"/);
    assert.match((await page.textContent('.hook-code'))!, /function transform\(event\)/);

    // A request without a JSON body: the filter's evaluation fails, which the hook page shows.
    const r = await api(d.url, d.token, 'POST', '/_hookd/report', {
      Method: 'PUT',
      Path: '/repositories/r7/data',
      StatusCode: 200,
    });
    assert.equal(r.status, 202, r.text);
    await page.reload();
    await page.waitForSelector('.last-filter-error');
    assert.match((await page.textContent('.last-filter-error'))!, /did not fire/);
  });
});
