import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { onConsoleOrigin, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook, type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { chromiumSkipReason, launchBrowser, type TestBrowser } from './browser.js';

// Details of the console a careful user sees, in Chromium: the charts' legends show the newest
// values before anything is hovered; the editor's heading names a named hook by its Name; the
// users page's Scopes placeholder is whole; the Live table's "Attempts" header is on one line.

// biome-ignore lint/suspicious/noExplicitAny: code that runs in the page
declare const document: any;
// biome-ignore lint/suspicious/noExplicitAny: code that runs in the page
declare const getComputedStyle: any;

const skip = chromiumSkipReason();
const ROOT = '/_hookd/console';

describe('console details in Chromium', { skip, timeout: 240_000 }, () => {
  let d: TestDaemon;
  let receiver: Receiver;
  let browser: TestBrowser;
  let page: Page;
  let hookId = '';

  before(async () => {
    receiver = await startReceiver();
    d = onConsoleOrigin(await startHookd());
    const hook = await createHook(d, {
      Name: 'orders-created',
      PathPattern: '/orders',
      Methods: ['GET'],
      Callback: `${receiver.url}/orders`,
    });
    hookId = hook.Id;
    // The overview's newest bucket is the current five minutes: a delivery made shortly before a
    // boundary, with the page read after it, is in the bucket before. Report after the boundary.
    const toBoundary = 300_000 - (Date.now() % 300_000);
    if (toBoundary < 60_000) await new Promise((r) => setTimeout(r, toBoundary + 1000));
    const res = await fetch(`${d.url}/_hookd/report`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ Method: 'GET', Path: '/orders', StatusCode: 200, Phase: 'after' }]),
    });
    assert.equal(res.status, 202);
    await until(
      'the callback arrived',
      () => receiver.calls.length,
      (n) => n >= 1,
    );
    // The receiver has the callback before the delivery's outcome is committed (and counted in
    // the overview's rollup): the charts are read once the log says so.
    await until(
      'the delivery is recorded as succeeded',
      async () =>
        (await (
          await fetch(`${d.url}/hooks/${hookId}/deliveries`, {
            headers: { authorization: `Bearer ${d.token}` },
          })
        ).json()) as { Status: string }[],
      (list) => list[0]?.Status === 'succeeded',
    );
    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.goto(`${d.url}${ROOT}/`);
    await page.fill('#token', d.token);
    await page.click('button[type=submit]');
    await page.waitForURL(`${d.url}${ROOT}/`);
  });

  after(async () => {
    await browser?.close();
    await d?.close();
    await receiver?.close();
  });

  /** The legend's text of every chart in `selector`, the pointer elsewhere. */
  const legends = (selector: string) =>
    page.evaluate(
      (sel: string) =>
        Array.from(document.querySelectorAll(`${sel} .u-legend`) as ArrayLike<{ textContent: string }>).map(
          (l) => l.textContent.replace(/\s+/g, ' ').trim(),
        ),
      selector,
    );

  it("the overview chart's legend shows the newest values, not --, before it is hovered", async () => {
    await page.goto(`${d.url}${ROOT}/`);
    await page.waitForSelector('#chart[data-drawn] canvas');
    const [legend] = await legends('#chart');
    assert.ok(legend, 'a legend');
    assert.doesNotMatch(legend, /--/, legend);
    assert.match(legend, /Delivered\s*1(?!\d)/, legend);
    assert.match(legend, /Failed\s*0(?!\d)/, legend);
  });

  it("a hook page's charts show their newest values too", async () => {
    await page.goto(`${d.url}${ROOT}/hooks/${hookId}`);
    await page.waitForSelector('#hook-chart[data-drawn] canvas');
    const all = await legends('#hook-chart');
    assert.equal(all.length, 2, JSON.stringify(all));
    for (const legend of all) assert.doesNotMatch(legend, /--/, legend);
  });

  it("the editor's heading names a named hook by its Name", async () => {
    await page.goto(`${d.url}${ROOT}/hooks/${hookId}/edit`);
    const heading = (await page.textContent('h1'))!;
    assert.match(heading, /orders-created/);
    assert.doesNotMatch(heading, new RegExp(hookId));
  });

  it("the users page's Scopes placeholder fits its field", async () => {
    await page.goto(`${d.url}${ROOT}/users`);
    const fit = await page.evaluate(() => {
      const input = document.querySelector('#u-scopes');
      const style = getComputedStyle(input);
      const ctx = document.createElement('canvas').getContext('2d');
      ctx.font = style.font;
      const room =
        input.clientWidth - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight);
      return { text: ctx.measureText(input.placeholder).width, room };
    });
    assert.ok(fit.text <= fit.room, `placeholder ${fit.text}px in ${fit.room}px`);
  });

  it('the Live table\'s "Attempts" header stays on one line beside long rows, at every width', async () => {
    await page.goto(`${d.url}${ROOT}/live`);
    await page.waitForSelector('#live-state:has-text("connected")');
    // Rows with long requests and receivers squeeze the narrow columns.
    const long = `/orders?${'q=very-long-query-value&'.repeat(8)}`;
    const res = await fetch(`${d.url}/_hookd/report`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ Method: 'GET', Path: long, StatusCode: 200, Phase: 'after' }]),
    });
    assert.equal(res.status, 202);
    await page.waitForSelector('#live-events tr');
    for (const width of [1280, 1000, 900, 800, 770]) {
      await page.setViewportSize({ width, height: 800 });
      const lines = await page.evaluate(() => {
        const headers = document.querySelectorAll('table.live th') as ArrayLike<{
          textContent: string;
          firstChild: unknown;
        }>;
        const th = Array.from(headers).find((h) => h.textContent === 'Attempts');
        if (!th || getComputedStyle(th).display === 'none') return 1;
        const range = document.createRange();
        range.selectNodeContents(th.firstChild);
        return range.getClientRects().length;
      });
      assert.equal(lines, 1, `at ${width}px`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
