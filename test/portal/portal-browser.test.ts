import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrowserContext, chromium, type Frame, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, chromiumSkipReason } from '../console/browser.js';
import { api, REPO_ROOT, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { addUser, createHook, type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { opensslSkipReason, startTlsFront, type TlsFront } from './tls-front.js';

// The portal as a service embeds it: a page on another site frames a portal link, served over
// HTTPS by a TLS proxy in front of the console listener, in real Chromium.

// biome-ignore lint/suspicious/noExplicitAny: code that runs in the page
declare const window: any;
// biome-ignore lint/suspicious/noExplicitAny: code that runs in the page
declare const document: any;

const skip = chromiumSkipReason() ?? opensslSkipReason();
const P = '/_hookd/portal';
const AXE = readFileSync(join(REPO_ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const SHOTS = process.env.HOOKD_SCREENSHOTS_DIR ?? join(REPO_ROOT, 'test-output', 'screenshots');
mkdirSync(SHOTS, { recursive: true });

/** The service's page: a settings page with the portal in an iframe, recording what it is told. */
const HOST_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme · Settings</title>
<style>body{margin:0;font:15px system-ui,sans-serif;background:#eef0f4;color:#111}
header{background:#1e1b4b;color:#fff;padding:14px 24px;font-weight:700}
.wrap{display:flex;gap:24px;padding:24px}
nav{width:180px;line-height:2}nav a{color:#312e81;display:block}
iframe{flex:1;height:820px;border:1px solid #c7cad1;border-radius:8px;background:#fff}</style></head>
<body><header>Acme Cloud</header><div class="wrap"><nav aria-label="Settings"><a href="#">Profile</a><a href="#">Billing</a><a href="#"><strong>Webhooks</strong></a></nav>
<iframe id="portal" title="Webhooks"></iframe></div>
<script>
window.messages = [];
window.addEventListener('message', (e) => window.messages.push({ origin: e.origin, data: e.data }));
const src = new URLSearchParams(location.search).get('src');
if (src) document.getElementById('portal').src = src;
</script></body></html>`;

async function startHostPage(): Promise<{ origin: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(HOST_PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function axe(frame: Frame, what: string): Promise<void> {
  await frame.evaluate(AXE);
  const violations = (await frame.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
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

describe('portal embedded in another site, in Chromium', { skip, timeout: 240_000 }, () => {
  let d: TestDaemon;
  let tls: TlsFront;
  let host: { origin: string; server: Server };
  let stranger: { origin: string; server: Server };
  let receiver: Receiver;
  let context: BrowserContext;
  let profile: string;
  let page: Page;
  let bobHook: string;
  let bobToken: string;
  let hookId = '';

  const link = async (extra: Record<string, unknown> = {}) => {
    const r = await api<{ Url: string; ExpiresAt: string }>(d.url, d.token, 'POST', '/_hookd/portal-links', {
      User: 'alice',
      Brand: { Title: 'Acme webhooks', Accent: '#4338ca' },
      ...extra,
    });
    assert.equal(r.status, 201, r.text);
    return r.body;
  };
  /** Shows `url` in the host page's iframe; resolves to the frame once it loaded. */
  const embed = async (url: string, on = host.origin): Promise<Frame> => {
    await page.goto(`${on}/?src=${encodeURIComponent(url)}`);
    const el = await page.waitForSelector('#portal');
    await page.waitForLoadState('load');
    return (await el.contentFrame())!;
  };
  const messages = async () =>
    (await page.evaluate(() => window.messages)) as {
      origin: string;
      data: { type: string; hookId?: string };
    }[];

  before(async () => {
    host = await startHostPage();
    stranger = await startHostPage();
    receiver = await startReceiver();
    d = await startHookd({ portalFrameAncestors: [host.origin], trustedProxies: ['127.0.0.1/32'] });
    tls = await startTlsFront(d.consoleUrl);
    await d.hookd.reload();
    await addUser(d, 'alice');
    bobToken = await addUser(d, 'bob');
    bobHook = (
      await createHook(
        d,
        { PathPattern: '/bob', Methods: ['POST'], Callback: `${receiver.url}/bob` },
        { token: bobToken },
      )
    ).Id;
    profile = mkdtempSync(join(tmpdir(), 'hookd-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 900 },
      ignoreHTTPSErrors: true,
    });
    page = await context.newPage();
    page.on('dialog', (dlg) => void (dlg.type() === 'confirm' ? dlg.accept() : dlg.dismiss()));
  });

  after(async () => {
    await context?.close().catch(() => undefined);
    if (profile) rmSync(profile, { recursive: true, force: true });
    await tls?.close();
    await d?.close();
    await receiver?.close();
    host?.server.close();
    stranger?.server.close();
  });

  it('signs in inside the frame, creates a hook, sees a test event arrive, rotates its secret', async () => {
    const { Url } = await link();
    const url = Url.replace(d.consoleUrl, tls.url);
    const frame = await embed(url);
    await frame.waitForSelector('h1:text("Hooks")');
    assert.match((await frame.textContent('.top .brand'))!, /Acme webhooks/);
    const cookie = (await context.cookies()).find((c) => c.name === 'hookd_portal');
    assert.ok(cookie, 'the session cookie is kept inside the frame');
    assert.equal(cookie.secure, true);
    assert.equal(cookie.sameSite, 'None');
    await axe(frame, 'the empty hook list (light)');

    await frame.click('a:text("New hook")');
    await frame.waitForSelector('#f-PathPattern');
    await frame.fill('#f-PathPattern', '/orders');
    await frame.fill('#f-Callback', `${receiver.url}/orders`);
    await frame.waitForFunction(() => document.getElementById('err-Callback')?.textContent === '');
    await axe(frame, 'the editor (light)');
    await frame.click('#hook-form button[type=submit]');
    await frame.waitForURL(/\/hooks\/hk_[^/]+$/);
    hookId = frame.url().split('/').pop()!;
    await until('hook-created reaches the host page', async () =>
      (await messages()).find((m) => m.data.type === 'hookd:hook-created'),
    );
    const created = (await messages()).find((m) => m.data.type === 'hookd:hook-created')!;
    assert.deepEqual(created, { origin: tls.url, data: { type: 'hookd:hook-created', hookId } });

    await frame.click('button:text("Send a test event")');
    await frame.waitForSelector('#test-result p.ok');
    await frame.waitForSelector('#log tbody tr:has-text("/orders") .badge.test', { timeout: 15_000 });
    await until('the receiver got the test event', () => receiver.calls.some((c) => c.url === '/orders'));
    await frame.waitForSelector('#log tbody tr .badge.succeeded', { timeout: 15_000 });

    await frame.click('button:text("Reveal secret")');
    await frame.waitForSelector('#secret-value');
    const before = await frame.textContent('#secret-value');
    await axe(frame, 'the hook page with its secret (light)');
    await frame.click('#secret button:text("Rotate secret")');
    await frame.waitForSelector('#secret p[role=status]:has-text("Rotated")');
    assert.notEqual(await frame.textContent('#secret-value'), before);
    await until('secret-rotated reaches the host page', async () =>
      (await messages()).find((m) => m.data.type === 'hookd:secret-rotated'),
    );
    const all = await messages();
    assert.ok(all.every((m) => m.origin === tls.url));
    const shown = all.find((m) => m.data.type === 'hookd:page') as { data: { height?: unknown } } | undefined;
    assert.ok(typeof shown?.data.height === 'number' && shown.data.height > 100, 'pages tell their height');
    assert.ok(!JSON.stringify(all).includes(before!), 'no secret in any message');
    assert.deepEqual(all.find((m) => m.data.type === 'hookd:secret-rotated')!.data, {
      type: 'hookd:secret-rotated',
      hookId,
    });
    await page.screenshot({ path: join(SHOTS, 'portal-embedded-light.png') });

    // The live view, through the same cookie, over the proxy's WebSocket.
    await frame.click('a:text("Live")');
    await frame.waitForURL(/\/live$/);
    await frame.waitForSelector('#live-filters[data-connected="true"]');
    const fired = await api(d.url, d.token, 'POST', '/_hookd/report', {
      Method: 'POST',
      Path: '/orders/7',
      StatusCode: 200,
    });
    assert.equal(fired.status, 202, fired.text);
    await frame.waitForSelector('tr.live-event:has-text("/orders/7")', { timeout: 15_000 });
    await axe(frame, 'the live view (light)');
  });

  it("cannot reach another user's hook by id, by URL or by a forged form, nor the admin pages", async () => {
    const frame = page.frames().find((f) => f.url().startsWith(tls.url))!;
    await frame.goto(`${tls.url}${P}/hooks`);
    const csrf = await frame.evaluate(() => document.querySelector('meta[name="csrf-token"]')?.content ?? '');
    assert.ok(csrf.length > 20);
    await frame.goto(`${tls.url}${P}/hooks/${bobHook}`);
    assert.equal(await frame.textContent('h1'), 'Not found');
    const statuses = await frame.evaluate(
      async ({ root, id, token }) => {
        const at = async (path: string, headers: Record<string, string> = {}) =>
          (
            await fetch(`${root}${path}`, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
              body: 'x=1',
            })
          ).status;
        return [
          await at(`/hooks/${id}/delete`, { 'X-CSRF-Token': token }),
          await at(`/hooks/${id}/secret`, { 'X-CSRF-Token': token }),
          await at(`/hooks/${id}/secret/rotate`, { 'X-CSRF-Token': token }),
          await at(`/hooks/${id}/delete`),
        ];
      },
      { root: P, id: bobHook, token: csrf },
    );
    assert.deepEqual(statuses.slice(0, 3), [404, 404, 404]);
    assert.ok([401, 403].includes(statuses[3]!), `no CSRF token: ${statuses[3]}`);
    // A form on the host page, posting into a frame of the portal: refused (it has no CSRF token).
    await page.evaluate(
      ({ action }) => {
        const frame = document.createElement('iframe');
        frame.name = 'forge';
        frame.title = 'forge';
        document.body.appendChild(frame);
        const f = document.createElement('form');
        f.method = 'POST';
        f.action = action;
        f.target = 'forge';
        document.body.appendChild(f);
        f.submit();
      },
      { action: `${tls.url}${P}/hooks/${hookId}/delete` },
    );
    await until('the forged form was answered', async () => {
      const f = page.frames().find((x) => x.url().endsWith('/delete'));
      return f && /CSRF/.test((await f.textContent('body').catch(() => '')) ?? '');
    });
    assert.equal((await api(d.url, bobToken, 'GET', `/hooks/${bobHook}`)).status, 200, "bob's hook is there");
    const again = await embed(`${tls.url}${P}/hooks/${hookId}`);
    assert.equal(
      await again.textContent('h1'),
      'Hook /orders',
      "alice's hook was not deleted by the forged form",
    );
    for (const path of [`${P}/users`, `${P}/users/alice`]) {
      await again.goto(`${tls.url}${path}`);
      assert.equal(await again.textContent('h1'), 'Not found', path);
    }
    // The portal's cookie is not a console session nor an API credential, and the operator's
    // console refuses every frame.
    await again.goto(`${tls.url}${P}/hooks`);
    const reached = await again.evaluate(async () => {
      const c = await fetch('/_hookd/console/users');
      const u = await fetch('/_hookd/users');
      return { console: c.url, api: u.status };
    });
    assert.match(reached.console, /\/_hookd\/console\/signin$/);
    assert.equal(reached.api, 401);
    await assert.rejects(again.goto(`${tls.url}/_hookd/console/users`), /ERR_BLOCKED_BY_RESPONSE/);
  });

  it('refuses the same link the second time and an expired link, with a page that says so', async () => {
    const { Url } = await link();
    const url = Url.replace(d.consoleUrl, tls.url);
    const first = await embed(url);
    await first.waitForSelector('h1:text("Hooks")');
    const second = await embed(url);
    assert.equal(await second.textContent('h1'), 'Link already used');
    await axe(second, 'the used-link page');
    const short = await link({ Ttl: '1s' });
    await until('the link expired', () => Date.now() > Date.parse(short.ExpiresAt));
    const late = await embed(short.Url.replace(d.consoleUrl, tls.url));
    assert.equal(await late.textContent('h1'), 'Link expired');
  });

  it('cannot be framed by a page on an origin that is not allowed', async () => {
    const { Url } = await link();
    const frame = await embed(Url.replace(d.consoleUrl, tls.url), stranger.origin);
    await until(
      'the frame was refused',
      () => frame.url().startsWith('chrome-error://') || frame.url() === 'about:blank',
    );
    const text = await frame.evaluate(() => document.body?.textContent ?? '').catch(() => '');
    assert.doesNotMatch(text, /Hooks|Acme/);
  });

  it('dark theme: the pages pass axe, and the host page shows it', async () => {
    const { Url } = await link({ Brand: { Title: 'Acme webhooks', Accent: '#a5b4fc', Theme: 'dark' } });
    const frame = await embed(Url.replace(d.consoleUrl, tls.url));
    await frame.waitForSelector('h1:text("Hooks")');
    assert.equal(await frame.getAttribute('html', 'data-theme'), 'dark');
    await axe(frame, 'the hook list (dark)');
    await frame.click(`a[href$="/hooks/${hookId}"]`);
    await frame.waitForSelector('#log tbody tr');
    await frame.waitForLoadState('load');
    await frame.click('button:text("Reveal secret")');
    await frame.waitForSelector('#secret-value');
    await axe(frame, 'the hook page (dark)');
    await frame.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(SHOTS, 'portal-embedded-dark.png') });
    await frame.goto(`${tls.url}${P}/hooks/${hookId}/edit`);
    await axe(frame, 'the editor (dark)');
    await frame.goto(`${tls.url}${P}/live`);
    await axe(frame, 'the live view (dark)');
  });

  it('deleting a hook tells the host page, after the redirect', async () => {
    const { Url } = await link();
    const frame = await embed(Url.replace(d.consoleUrl, tls.url));
    await frame.goto(`${tls.url}${P}/hooks/${hookId}`);
    await frame.waitForLoadState('load');
    await frame.click('button:text("Delete")');
    await frame.waitForURL(/\/hooks$/);
    await until('hook-deleted reaches the host page', async () =>
      (await messages()).find((m) => m.data.type === 'hookd:hook-deleted'),
    );
    const deleted = (await messages()).find((m) => m.data.type === 'hookd:hook-deleted')!;
    assert.deepEqual(deleted, { origin: tls.url, data: { type: 'hookd:hook-deleted', hookId } });
  });
});
