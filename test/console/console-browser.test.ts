import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { onConsoleOrigin, REPO_ROOT, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { addUser, createHook, startUpstream, type Upstream } from '../helpers/servers.js';
import { chromiumSkipReason, launchBrowser, type TestBrowser } from './browser.js';

// The browser's globals, for the functions handed to page.evaluate (the tsconfig has no DOM lib).
// biome-ignore lint/suspicious/noExplicitAny: code that runs in the page
declare const window: any;
// biome-ignore lint/suspicious/noExplicitAny: code that runs in the page
declare const document: any;

const skip = chromiumSkipReason();
const ROOT = '/_hookd/console';
const AXE = readFileSync(join(REPO_ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
/** What a hook owner or a receiver might try: each must stay text on every page. */
const PAYLOAD = `<script>window.__xss=1</script>"><img src=x onerror="window.__xss=2">javascript:window.__xss=3`;

/** A receiver answering 200; under /evil its answer is the payload, as HTML. */
async function startEvilReceiver(): Promise<{ url: string; close: () => Promise<void>; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.startsWith('/evil')) res.writeHead(200, { 'content-type': 'text/html' }).end(PAYLOAD);
      else if (req.url?.startsWith('/fail'))
        res.writeHead(500, { 'content-type': 'text/plain' }).end('broken');
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Signs a browser in with a token through the form; resolves on the overview. */
async function signIn(page: Page, d: TestDaemon, token: string): Promise<void> {
  await page.goto(`${d.url}${ROOT}/`);
  assert.match(page.url(), /\/signin$/, 'not signed in yet: sent to the sign-in form');
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForURL(`${d.url}${ROOT}/`);
  assert.equal(await page.textContent('h1'), 'Overview');
}

/** axe-core on the page as it is: no serious or critical violations. */
async function axe(page: Page, what: string): Promise<void> {
  // Evaluated over the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(AXE);
  const violations = (await page.evaluate(async () => {
    const r = await (
      window as unknown as { axe: { run: (o: unknown) => Promise<{ violations: unknown[] }> } }
    ).axe.run({ resultTypes: ['violations'] });
    return r.violations;
  })) as { id: string; impact: string; help: string; nodes: { target: string[] }[] }[];
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map(
      (v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    ),
    [],
    `accessibility of ${what}`,
  );
}

describe('web console in Chromium', { skip, timeout: 240_000 }, () => {
  let d: TestDaemon;
  let site: TestDaemon;
  let upstream: Upstream;
  let receiver: Awaited<ReturnType<typeof startEvilReceiver>>;
  let alice: TestBrowser;
  let page: Page;
  const dialogs: string[] = [];
  let hookId = '';
  let deliveryId = '';

  before(async () => {
    upstream = await startUpstream();
    receiver = await startEvilReceiver();
    // The console on its own origin (issue 22); proxied requests go to the service's (`site`).
    site = await startHookd({ upstream: upstream.url, retrySchedule: [0, 1] });
    d = onConsoleOrigin(site);
    alice = await launchBrowser();
    page = await alice.context.newPage();
    page.on('dialog', (dlg) => {
      dialogs.push(`${dlg.type()}: ${dlg.message()}`);
      // Confirmations the console asks for are accepted; anything else is recorded and fails a test.
      if (dlg.type() === 'confirm') void dlg.accept();
      else void dlg.dismiss();
    });
  });

  after(async () => {
    await alice?.close();
    await d?.close();
    await upstream?.close();
    await receiver?.close();
  });

  it('signs in with a token; the session cookie is HttpOnly, SameSite=Strict, path-scoped', async () => {
    await signIn(page, d, d.token);
    const cookies = await alice.context.cookies(`${d.url}${ROOT}/`);
    const session = cookies.find((c) => c.name === 'hookd_console');
    assert.ok(session, 'a session cookie is set');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    assert.equal(session.secure, false, 'plain http without a trusted proxy: not Secure');
    assert.equal(session.path, ROOT);
    assert.ok(
      !cookies.some((c) => c.value.includes(d.token.slice(-20))),
      'the token is not kept in the browser',
    );
  });

  it('creates a hook through the form after fixing the validation error it showed', async () => {
    await page.goto(`${d.url}${ROOT}/hooks/new`);
    await page.fill('#f-PathPattern', '/items/(*)');
    await page.fill('#f-Callback', 'not a url');
    // Debounced live validation: the error appears next to the field without submitting.
    await page.waitForFunction(() => /URL/.test(document.getElementById('err-Callback')?.textContent ?? ''));
    assert.equal(await page.getAttribute('#f-Callback', 'aria-describedby'), 'err-Callback');
    await page.fill('#f-Callback', `${receiver.url}/cb/$1`);
    await page.waitForFunction(() => document.getElementById('err-Callback')?.textContent === '');
    assert.match((await page.textContent('#hook-json'))!, /"Callback": "http:\/\/127\.0\.0\.1:\d+\/cb\/\$1"/);
    await page.screenshot({ path: join(REPO_ROOT, 'docs', 'console-hook-editor.png'), fullPage: true });
    await axe(page, 'the hook editor');
    await page.click('#hook-form button[type=submit]');
    await page.waitForURL(/\/hooks\/hk_[^/]+$/);
    hookId = page.url().split('/').pop()!;
    assert.equal(await page.textContent('h1'), 'Hook /items/(*)');
    await axe(page, 'the hook page');
  });

  it('shows a proxied request on the live page and in the log without reloading', async () => {
    const live = await alice.context.newPage();
    await live.goto(`${d.url}${ROOT}/live`);
    await live.waitForSelector('#live-filters[data-connected="true"]');
    await axe(live, 'the live page');
    // The hook page is open on its log before the request is made.
    await page.goto(`${d.url}${ROOT}/hooks/${hookId}`);
    const res = await fetch(`${site.url}/items/42`);
    assert.equal(res.status, 200);
    await live.waitForSelector('tr.live-event:has-text("/items/42")', { timeout: 15_000 });
    await page.waitForSelector('#log tbody tr:has-text("/items/42")', { timeout: 15_000 });
    await live.close();
  });

  it('opens the delivery, redelivers it and shows the second attempt', async () => {
    await page.click('#log tbody tr a');
    await page.waitForURL(/\/deliveries\/msg_/);
    deliveryId = page.url().split('/').pop()!;
    await page.waitForSelector('.attempt[data-attempt="1"]', { timeout: 15_000 });
    assert.match((await page.textContent('main'))!, /header\(s\) of the hook are not shown/);
    await page.click('text=Redeliver');
    await page.waitForSelector('.attempt[data-attempt="2"]', { timeout: 15_000 });
    await page.screenshot({ path: join(REPO_ROOT, 'docs', 'console-delivery.png'), fullPage: true });
    await axe(page, 'the delivery page');
  });

  it('draws the overview chart with data', async () => {
    // A hook whose receiver fails: the chart shows both outcomes (two attempts, then failed).
    const failing = await createHook(d, {
      PathPattern: '/boom',
      Methods: ['*'],
      Type: 1,
      Callback: `${receiver.url}/fail`,
    });
    for (let i = 0; i < 2; i++) await fetch(`${site.url}/boom`);
    for (let t = Date.now(); Date.now() - t < 15_000; ) {
      await page.goto(`${d.url}${ROOT}/hooks/${failing.Id}?status=failed`);
      if ((await page.locator('#log tbody tr').count()) === 2) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    await page.goto(`${d.url}${ROOT}/`);
    assert.equal(await page.textContent('[data-figure="failed"]'), '2');
    await page.waitForSelector('#chart[data-drawn] canvas');
    assert.ok(Number(await page.textContent('[data-figure="delivered"]')) >= 1);
    // Some pixels of the plot are painted (the series, not only the axes' empty frame).
    const painted = await page.evaluate(() => {
      const c = document.querySelector('#chart canvas');
      const img = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < img.length; i += 4) if (img[i + 1]! > 100 && img[i]! < 100 && img[i + 3]! > 0) n++;
      return n;
    });
    assert.ok(painted > 0, 'green (delivered) pixels are drawn');
    await page.screenshot({ path: join(REPO_ROOT, 'docs', 'console-overview.png'), fullPage: true });
    await axe(page, 'the overview');
    await page.goto(`${d.url}${ROOT}/hooks`);
    assert.match((await page.textContent('table.hooks'))!, /\/items\/\(\*\)/);
    await axe(page, 'the hook list');
    await page.goto(`${d.url}${ROOT}/hooks/${hookId}/edit`);
    await axe(page, 'the hook editor on a stored hook');
  });

  it('keeps stored payloads in a path, a header and a receiver answer inert on every page', async () => {
    const evil = await createHook(d, {
      PathPattern: '/x',
      Methods: ['*'],
      Type: 1,
      Callback: `${receiver.url}/evil`,
      Headers: { 'X-Note': PAYLOAD },
    });
    const live = await alice.context.newPage();
    live.on('dialog', (dlg) => {
      dialogs.push(`${dlg.type()}: ${dlg.message()}`);
      void dlg.dismiss();
    });
    await live.goto(`${d.url}${ROOT}/live`);
    await live.waitForSelector('#live-filters[data-connected="true"]');
    const report = await fetch(`${d.url}/_hookd/report`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ Method: 'GET', Path: `/x/${PAYLOAD}`, StatusCode: 200 }),
    });
    assert.equal(report.status, 202);
    await live.waitForSelector('tr.live-event:has-text("window.__xss=1")', { timeout: 15_000 });
    await page.goto(`${d.url}${ROOT}/hooks/${evil.Id}`);
    await page.waitForSelector('#log tbody tr a');
    await page.click('#log tbody tr a');
    await page.waitForSelector('.attempt[data-attempt="1"] pre', { timeout: 15_000 });
    const pages = [live, page];
    for (const p of pages) {
      assert.equal(await p.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
      assert.equal(await p.locator('img[src="x"]').count(), 0, 'no element was made from the payload');
      assert.equal(await p.locator('a[href^="javascript:"]').count(), 0);
    }
    assert.ok((await page.textContent('main'))!.includes(PAYLOAD), 'the answer is shown, as text');
    for (const path of [`/hooks/${evil.Id}`, `/hooks/${evil.Id}/edit`, '/hooks']) {
      await page.goto(`${d.url}${ROOT}${path}`);
      assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
      assert.equal(await page.locator('img[src="x"]').count(), 0);
    }
    assert.ok((await page.inputValue('#q').catch(() => '')) === '');
    await live.close();
    assert.deepEqual(dialogs, [], 'no dialog opened');
  });

  it('refuses a state-changing request without the CSRF token', async () => {
    const before = await page.context().request.post(`${d.url}${ROOT}/hooks/${hookId}/delete`, {
      form: { nothing: '1' },
      maxRedirects: 0,
    });
    assert.equal(before.status(), 403);
    const wrong = await page.context().request.post(`${d.url}${ROOT}/hooks/${hookId}/delete`, {
      form: { _csrf: 'not-the-token' },
      maxRedirects: 0,
    });
    assert.equal(wrong.status(), 403);
    await page.goto(`${d.url}${ROOT}/hooks/${hookId}`);
    assert.equal(await page.textContent('h1'), 'Hook /items/(*)', 'the hook is still there');
  });

  it("shows a second user none of the first user's hooks, deliveries or pages (direct URLs: 404)", async () => {
    const bobToken = await addUser(d, 'bob');
    const bob = await launchBrowser();
    try {
      const p = await bob.context.newPage();
      await signIn(p, d, bobToken);
      assert.equal(await p.textContent('[data-figure="delivered"]'), '0');
      await p.goto(`${d.url}${ROOT}/hooks`);
      assert.equal(await p.locator('table.hooks tbody tr').count(), 0);
      assert.doesNotMatch((await p.textContent('main'))!, /items/);
      for (const path of [`/hooks/${hookId}`, `/hooks/${hookId}/edit`, `/deliveries/${deliveryId}`]) {
        const r = await p.goto(`${d.url}${ROOT}${path}`);
        assert.equal(r!.status(), 404, path);
        assert.doesNotMatch(await p.content(), /\/items\//, `${path} reveals nothing`);
      }
      const token = (await p.getAttribute('meta[name="csrf-token"]', 'content').catch(() => null)) ?? '';
      await p.goto(`${d.url}${ROOT}/`);
      const csrf = (await p.getAttribute('meta[name="csrf-token"]', 'content'))!;
      assert.equal(token, '', 'the 404 page carries no session token');
      for (const path of [
        `/hooks/${hookId}/delete`,
        `/hooks/${hookId}/secret`,
        `/deliveries/${deliveryId}/redeliver`,
      ]) {
        const r = await p
          .context()
          .request.post(`${d.url}${ROOT}${path}`, { form: { _csrf: csrf }, maxRedirects: 0 });
        assert.equal(r.status(), 404, path);
      }
      // Live: the first user's traffic does not reach the second user's tail.
      await p.goto(`${d.url}${ROOT}/live`);
      await p.waitForSelector('#live-filters[data-connected="true"]');
      await fetch(`${site.url}/items/43`);
      await page.goto(`${d.url}${ROOT}/hooks/${hookId}`);
      await page.waitForSelector('#log tbody tr:has-text("/items/43")', { timeout: 15_000 });
      assert.equal(await p.locator('tr.live-event').count(), 0);
    } finally {
      await bob.close();
    }
  });

  it("shows the admin the users, their scopes and tokens (the admin's pages)", async () => {
    await page.goto(`${d.url}${ROOT}/users`);
    assert.match((await page.textContent('main table'))!, /bob/);
    await axe(page, 'the users page');
    await page.click('text=bob');
    await page.waitForURL(/\/users\/bob$/);
    assert.ok((await page.inputValue('#scopes')).length > 0, 'the scopes are shown');
    await page.fill('#t-label', 'from the console');
    await page.click('text=Create token');
    assert.match((await page.textContent('#new-token'))!, /^hkd_/);
    await axe(page, 'a user page');
  });

  it('is usable at phone width: no page scrolls sideways', async () => {
    const phone = await alice.context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    for (const path of [
      '/',
      '/hooks',
      '/hooks/new',
      `/hooks/${hookId}`,
      `/deliveries/${deliveryId}`,
      '/live',
      '/users',
      '/users/bob',
    ]) {
      await phone.goto(`${d.url}${ROOT}${path}`);
      const [scroll, width] = await phone.evaluate(() => [
        document.documentElement.scrollWidth,
        window.innerWidth,
      ]);
      assert.ok(scroll! <= width! + 1, `${path} is ${scroll}px wide in a ${width}px viewport`);
    }
    await phone.close();
  });

  it('signs out; the sign-in page passes the accessibility scan', async () => {
    await page.goto(`${d.url}${ROOT}/`);
    await page.click('text=Sign out');
    await page.waitForURL(/\/signin$/);
    await axe(page, 'the sign-in page');
    const cookies = await alice.context.cookies(`${d.url}${ROOT}/`);
    assert.ok(!cookies.some((c) => c.name === 'hookd_console' && c.value !== ''));
    await page.goto(`${d.url}${ROOT}/hooks`);
    assert.match(page.url(), /\/signin$/);
  });
});
