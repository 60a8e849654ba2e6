import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
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
interface Received {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

async function startEvilReceiver(): Promise<{
  url: string;
  close: () => Promise<void>;
  server: Server;
  received: Received[];
}> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, body });
      if (req.url?.startsWith('/evil')) res.writeHead(200, { 'content-type': 'text/html' }).end(PAYLOAD);
      else if (req.url?.startsWith('/fail'))
        res.writeHead(500, { 'content-type': 'text/plain' }).end('broken');
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    received,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/**
 * Where screenshots go: test-output/screenshots/ (git-ignored) in a test run, docs/ when
 * `npm run screenshots` asks (HOOKD_SCREENSHOTS_DIR), so `npm test` never changes a tracked file.
 */
const SHOTS = process.env.HOOKD_SCREENSHOTS_DIR ?? join(REPO_ROOT, 'test-output', 'screenshots');
mkdirSync(SHOTS, { recursive: true });

/** The page as it is, at desktop width and at phone width (console-NAME.png, console-NAME-phone.png). */
async function shoot(page: Page, name: string): Promise<void> {
  const size = page.viewportSize() ?? { width: 1280, height: 800 };
  await page.screenshot({ path: join(SHOTS, `console-${name}.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(SHOTS, `console-${name}-phone.png`), fullPage: true });
  await page.setViewportSize(size);
}

let signInShot = false;

/** Signs a browser in with a token through the form; resolves on the overview. */
async function signIn(page: Page, d: TestDaemon, token: string): Promise<void> {
  await page.goto(`${d.url}${ROOT}/`);
  assert.match(page.url(), /\/signin$/, 'not signed in yet: sent to the sign-in form');
  if (!signInShot) {
    signInShot = true;
    // Item 13: the sign-in page says where the admin's token is.
    assert.match((await page.textContent('main'))!, /admin\.token/);
    assert.match((await page.textContent('main'))!, /\/var\/lib\/hookd\/admin\.token/);
    await shoot(page, 'signin');
  }
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
    // The console on its own origin; proxied requests go to the service's (`site`).
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
    // A new user's overview says there is no data yet, and why (item 13).
    assert.match((await page.textContent('#welcome'))!, /No data yet/);
    assert.match((await page.textContent('#chart-empty'))!, /No data yet/);
    await axe(page, 'the empty overview');
    await shoot(page, 'overview-empty');
    await page.goto(`${d.url}${ROOT}/hooks`);
    assert.match((await page.textContent('main .empty'))!, /No hooks yet/);
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
    // Item 6: a blank form claims nothing.
    assert.doesNotMatch((await page.textContent('#validation'))!, /No problems found/);
    // Warnings show while there are errors, once, in amber beside the field (not as errors).
    await page.fill('#f-PathPattern', '/items/(*)');
    await page.fill('#f-CallbackContent', '{"path": $REQUEST_PATH}');
    await page.waitForFunction(() =>
      /warning/i.test(document.querySelector('#err-CallbackContent .field-warning')?.textContent ?? ''),
    );
    assert.match((await page.textContent('#validation'))!, /problem.*to fix/);
    assert.match((await page.textContent('#validation'))!, /1 warning/);
    assert.doesNotMatch(
      (await page.textContent('#validation'))!,
      /outside a JSON string/,
      'the warning is not repeated at the top',
    );
    assert.equal(await page.locator('#validation p.error:has-text("outside a JSON string")').count(), 0);
    await page.fill('#f-CallbackContent', '');
    // The rate limit is a field of the form, and goes into the document.
    await page.fill('#f-RateLimitPerSecond', '5');
    await page.waitForFunction(() =>
      /"PerSecond": 5/.test(document.getElementById('hook-json')?.textContent ?? ''),
    );
    await page.fill('#f-RateLimitPerSecond', '');
    await page.fill('#f-Callback', 'not a url');
    // Debounced live validation: the error appears next to the field without submitting.
    await page.waitForFunction(() => /URL/.test(document.getElementById('err-Callback')?.textContent ?? ''));
    assert.equal(await page.getAttribute('#f-Callback', 'aria-describedby'), 'err-Callback');
    await page.fill('#f-Callback', `${receiver.url}/cb/$1`);
    await page.waitForFunction(() => document.getElementById('err-Callback')?.textContent === '');
    assert.match((await page.textContent('#hook-json'))!, /"Callback": "http:\/\/127\.0\.0\.1:\d+\/cb\/\$1"/);
    // The dry run judges the hook being edited, before it is saved.
    await page.fill('#dr-path', '/items/9');
    await page.click('#h-dry ~ form button[type=submit]');
    await page.waitForSelector('#dry-result article.preview[data-draft="true"]');
    assert.match((await page.textContent('#dry-result'))!, /"captures":\["9"\]/);
    await shoot(page, 'hook-editor');
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
    // One row per delivery, updated in place: its outcome arrives in the same row (item 13).
    await live.waitForSelector('tr.live-event[data-outcome="succeeded"]:has-text("/items/42")', {
      timeout: 15_000,
    });
    assert.equal(await live.locator('tr.live-event').count(), 1);
    const row = (await live.textContent('tr.live-event'))!;
    assert.match(row, /\/items\/\(\*\)/, 'the hook column');
    assert.match(row, /GET \/items\/42 \[200\]/, "the upstream's status");
    assert.match(row, /succeeded 200/, "the receiver's answer");
    assert.equal(await live.locator('#live-empty').isVisible(), false);
    // Newest first, strictly.
    await fetch(`${site.url}/items/43`);
    await live.waitForSelector('tr.live-event[data-outcome="succeeded"]:has-text("/items/43")', {
      timeout: 15_000,
    });
    const order = await live.locator('tr.live-event td.trigger').allTextContents();
    assert.deepEqual(
      order.map((t) => /\/items\/(\d+)/.exec(t)?.[1]),
      ['43', '42'],
    );
    await shoot(live, 'live');
    await live.close();
  });

  it('shows every field of a hook on its page, and sends a test event through the pipeline', async () => {
    const full = await createHook(d, {
      PathPattern: '/orders/(*)',
      Methods: ['POST'],
      Type: 1,
      StatusCodeWhiteList: [201],
      Callback: `${receiver.url}/orders`,
      Headers: { 'X-Api-Key': 'k-123' },
      CallbackContent: '{"order": "$1"}',
      RetrySchedule: [0, 10],
      RateLimit: { PerSecond: 2, Burst: 4 },
    });
    await page.goto(`${d.url}${ROOT}/hooks/${full.Id}`);
    const facts = (await page.textContent('dl.hook-facts'))!;
    for (const part of [
      /Only for statuses\s*201/,
      /X-Api-Key/,
      /\{"order": "\$1"\}/,
      /0 s, 10 s/,
      /2 per second, bursts of 4/,
    ])
      assert.match(facts, part);
    assert.match((await page.textContent('#hook-chart-empty'))!, /No data yet/);
    const before = receiver.received.length;
    await page.click('text=Send a test event');
    await page.waitForSelector('#test-result .ok');
    await page.waitForSelector('#log tbody tr:has-text("test")', { timeout: 15_000 });
    for (let t = Date.now(); receiver.received.length === before && Date.now() - t < 15_000; )
      await new Promise((r) => setTimeout(r, 100));
    const got = receiver.received.at(-1)!;
    assert.equal(got.url, '/orders');
    assert.equal(got.headers['hookd-test'], 'true');
    assert.equal(got.body, '{"order": "test"}');
    const api = (await (
      await fetch(`${d.url}/hooks/${full.Id}/deliveries`, { headers: { authorization: `Bearer ${d.token}` } })
    ).json()) as { Test?: boolean }[];
    assert.equal(api[0]?.Test, true, 'the API log says Test: true');
    // The default event document says so too.
    const plain = await createHook(d, {
      PathPattern: '/plain',
      Methods: ['GET'],
      Type: 1,
      Callback: `${receiver.url}/plain`,
    });
    await page.goto(`${d.url}${ROOT}/hooks/${plain.Id}`);
    await page.click('text=Send a test event');
    await page.waitForSelector('#log tbody tr:has-text("test")', { timeout: 15_000 });
    for (let t = Date.now(); !receiver.received.some((r) => r.url === '/plain') && Date.now() - t < 15_000; )
      await new Promise((r) => setTimeout(r, 100));
    const doc = JSON.parse(receiver.received.find((r) => r.url === '/plain')!.body) as {
      test?: boolean;
      event: string;
    };
    assert.equal(doc.test, true);
    assert.equal(doc.event, 'hook.fired');
    // The chart of outcomes and latency is drawn once there is data.
    await page.goto(`${d.url}${ROOT}/hooks/${full.Id}`);
    await page.waitForSelector('#hook-chart[data-drawn] canvas');
    // The secret, revealed, has a copy button.
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: d.url });
    await page.click('text=Reveal secret');
    await page.waitForSelector('#secret-value');
    await page.click('#secret button.copy');
    await page.waitForFunction(() =>
      /Copied|Selected/.test(document.querySelector('#secret button.copy')?.textContent ?? ''),
    );
    await axe(page, 'a hook page with every field');
    await shoot(page, 'hook');
  });

  it('opens the delivery, redelivers it and shows the second attempt', async () => {
    await page.goto(`${d.url}${ROOT}/hooks/${hookId}`);
    await page.waitForSelector('#log tbody tr a');
    await page.click('#log tbody tr a');
    await page.waitForURL(/\/deliveries\/msg_/);
    deliveryId = page.url().split('/').pop()!;
    await page.waitForSelector('.attempt[data-attempt="1"]', { timeout: 15_000 });
    // Item 10: Content-Type is not one of "the hook's headers".
    assert.match((await page.textContent('main'))!, /The hook sets no headers of its own/);
    await page.click('text=Redeliver');
    await page.waitForSelector('.attempt[data-attempt="2"]', { timeout: 15_000 });
    // A manual redelivery is not a retry.
    assert.match((await page.textContent('.attempt[data-attempt="2"]'))!, /manual redelivery/);
    await shoot(page, 'delivery');
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
    await shoot(page, 'overview');
    await axe(page, 'the overview');
    await page.goto(`${d.url}${ROOT}/hooks`);
    assert.match((await page.textContent('table.hooks'))!, /\/items\/\(\*\)/);
    // "Last delivery" has a time, in the one format.
    assert.match(
      (await page.textContent('table.hooks tr:has-text("/items/(*)") td.last'))!,
      /(ago|just now) \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/,
    );
    await axe(page, 'the hook list');
    await shoot(page, 'hooks');
    // The delivery log filters by trigger path and by the receiver's status.
    await page.goto(`${d.url}${ROOT}/hooks/${failing.Id}?receiver=5xx`);
    assert.equal(await page.locator('#log tbody tr').count(), 2);
    await page.goto(`${d.url}${ROOT}/hooks/${failing.Id}?receiver=2xx`);
    assert.equal(await page.locator('#log tbody tr').count(), 0);
    assert.match((await page.textContent('#log'))!, /No deliveries match these filters/);
    await page.goto(`${d.url}${ROOT}/hooks/${hookId}?path=/items/43`);
    assert.equal(await page.locator('#log tbody tr').count(), 1);
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
    // Tokens say when they were last used: the admin's token signed this session in.
    await page.goto(`${d.url}${ROOT}/users/admin`);
    assert.match((await page.textContent('td.last-used'))!, /(ago|just now) \d{4}-/);
    await page.goto(`${d.url}${ROOT}/users`);
    await axe(page, 'the users page');
    await page.click('text=bob');
    await page.waitForURL(/\/users\/bob$/);
    assert.ok((await page.inputValue('#scopes')).length > 0, 'the scopes are shown');
    await page.fill('#t-label', 'from the console');
    await page.click('text=Create token');
    assert.match((await page.textContent('#new-token'))!, /^hkd_/);
    assert.equal(await page.locator('button.copy[data-copy="new-token"]').count(), 1, 'a copy button');
    await axe(page, 'a user page');
    await shoot(page, 'user');
    await page.goto(`${d.url}${ROOT}/users`);
    await shoot(page, 'users');
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

  it('links its own icon, so no page load asks the upstream for /favicon.ico (item 2)', async () => {
    await page.goto(`${d.url}${ROOT}/`);
    const href = await page.getAttribute('link[rel="icon"]', 'href');
    assert.equal(href, `${ROOT}/assets/favicon.svg`);
    const icon = await page.context().request.get(`${d.url}${href}`);
    assert.equal(icon.status(), 200);
    assert.match(icon.headers()['content-type'] ?? '', /image\/svg\+xml/);
    assert.ok(
      !upstream.requests.some((r) => r.url.startsWith('/favicon')),
      `the upstream saw: ${upstream.requests.map((r) => r.url).join(', ')}`,
    );
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
