import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { onConsoleOrigin, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook, type Receiver, startReceiver } from '../helpers/servers.js';
import { chromiumSkipReason, launchBrowser, type TestBrowser } from './browser.js';

// The Live page in Chromium at phone width (375 px) and beside: a pattern and a request path wrap
// after their slashes, never inside a token ("(" + "*)", "attribu" + "tes"), and no cell falls to
// one character per line.

// biome-ignore lint/suspicious/noExplicitAny: code that runs in the page
declare const document: any;
// biome-ignore lint/suspicious/noExplicitAny: code that runs in the page
declare const getComputedStyle: any;
// biome-ignore lint/suspicious/noExplicitAny: code that runs in the page
declare const window: any;

const skip = chromiumSkipReason();
const ROOT = '/_hookd/console';
const PATTERN = '/repositories/(*)/timeseries/(*)/attributes/(*)';
const PATH = '/repositories/weather-stations/timeseries/temperature-outside/attributes/calibration';

/**
 * Each visible cell of the first Live row: its lines as drawn, and at each line break the two
 * characters around it (`"s/|t"` reads: the line ends after "/", the next begins with "t").
 */
function rendered(page: Page): Promise<{ cls: string; text: string; lines: string[]; breaks: string[] }[]> {
  return page.evaluate(() => {
    const row = document.querySelector('tr.live-event');
    const out: { cls: string; text: string; lines: string[]; breaks: string[] }[] = [];
    for (const td of Array.from(row.cells) as { className: string; textContent: string }[]) {
      if (getComputedStyle(td).display === 'none') continue;
      const text = td.textContent;
      const lines: string[] = [];
      const breaks: string[] = [];
      let lastTop: number | undefined;
      let at = 0;
      const walker = document.createTreeWalker(td, 4);
      for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
        for (let i = 0; i < n.data.length; i++, at++) {
          const r = document.createRange();
          r.setStart(n, i);
          r.setEnd(n, i + 1);
          const rect = r.getClientRects()[0];
          if (rect === undefined || rect.width === 0) continue;
          const top = Math.round(rect.top);
          if (lastTop === undefined || Math.abs(top - lastTop) >= 4) {
            if (lastTop !== undefined)
              breaks.push(`${text.slice(Math.max(0, at - 2), at)}|${text.slice(at, at + 2)}`);
            lines.push('');
            lastTop = top;
          }
          lines[lines.length - 1] += n.data[i];
        }
      }
      out.push({ cls: td.className, text, lines: lines.map((l) => l.trim()), breaks });
    }
    return out;
  });
}

describe('the Live page wraps at phone width without breaking tokens', { skip, timeout: 120_000 }, () => {
  let d: TestDaemon;
  let receiver: Receiver;
  let browser: TestBrowser;
  let page: Page;

  before(async () => {
    receiver = await startReceiver();
    d = onConsoleOrigin(await startHookd());
    await createHook(d, { PathPattern: PATTERN, Methods: ['GET'], Type: 1, Callback: `${receiver.url}/in` });
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

  it('at 375 px and 760 px: lines end after a slash, a hyphen or a word, none is one character', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(`${d.url}${ROOT}/live`);
    await page.waitForSelector('#live-filters[data-connected="true"]');
    const res = await fetch(`${d.url}/_hookd/report`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ Method: 'GET', Path: PATH, StatusCode: 200, Phase: 'after' }]),
    });
    assert.equal(res.status, 202);
    await page.waitForSelector('tr.live-event[data-outcome="succeeded"]', { timeout: 15_000 });
    for (const width of [375, 760]) {
      await page.setViewportSize({ width, height: 800 });
      const cells = await rendered(page);
      const hook = cells.find((c) => c.text === PATTERN);
      const trigger = cells.find((c) => c.cls === 'trigger');
      assert.ok(hook && trigger, JSON.stringify(cells));
      for (const c of [hook, trigger]) {
        assert.ok(
          c.lines.length > 1,
          `at ${width}px the ${c.cls || 'hook'} cell wraps: ${JSON.stringify(c.lines)}`,
        );
        // A line ends after a slash, a hyphen or a space: never between two letters, nor in "(*)".
        for (const b of c.breaks)
          assert.match(b, /[/\s-]\|/, `at ${width}px a break inside a token: ${JSON.stringify(c)}`);
      }
      assert.ok(!hook.lines.some((l) => l.endsWith('(')), 'the capture (*) stays whole');
      assert.ok(
        trigger.lines.some((l) => l.includes('attributes/')),
        'attributes stays whole',
      );
      for (const c of cells)
        for (const l of c.lines)
          assert.ok(
            l.length > 1 || c.text.trim().length === 1,
            `at ${width}px a one-character line in ${JSON.stringify(c)}`,
          );
      const [scroll, inner] = await page.evaluate(() => [
        document.documentElement.scrollWidth,
        window.innerWidth,
      ]);
      assert.ok(scroll <= inner + 1, `the page is ${scroll}px wide in ${inner}px`);
    }
    // The time links to the delivery, as the Delivery column (hidden at phone width) does.
    assert.match((await page.getAttribute('tr.live-event td.fired a', 'href')) ?? '', /\/deliveries\/msg_/);
  });
});
