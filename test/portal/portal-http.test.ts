import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { addUser, createHook, portalLink, type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// The portal over HTTP: the link route and its validation, single use, the session's cookie and
// headers, and one user's portal session against another user's hooks, the admin pages and
// writes it was not given.

const P = '/_hookd/portal';
const HOST = 'http://localhost:4999';

interface Portal {
  cookie: string;
  csrf: string;
}

/** Makes a link for `user` and opens it as a browser would: the session cookie and CSRF token. */
async function signIn(d: TestDaemon, user: string, extra: Record<string, unknown> = {}): Promise<Portal> {
  const link = await portalLink(d, user, extra);
  assert.equal(link.status, 201, link.text);
  const opened = await fetch(link.body.Url, { redirect: 'manual' });
  assert.equal(opened.status, 303);
  const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
  const page = await get(d, '/hooks', { cookie });
  assert.equal(page.status, 200);
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(page.text)![1]!;
  return { cookie, csrf };
}

async function get(d: TestDaemon, path: string, s: Pick<Portal, 'cookie'>) {
  const res = await fetch(`${d.consoleUrl}${P}${path}`, {
    headers: { cookie: s.cookie },
    redirect: 'manual',
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function post(d: TestDaemon, path: string, s: Portal, form: Record<string, string> = {}, csrf = true) {
  const body = new URLSearchParams({ ...(csrf && { _csrf: s.csrf }), ...form }).toString();
  const res = await fetch(`${d.consoleUrl}${P}${path}`, {
    method: 'POST',
    headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body,
    redirect: 'manual',
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('portal over HTTP', { timeout: 60_000 }, () => {
  let d: TestDaemon;
  let receiver: Receiver;
  let aliceToken: string;
  let bobToken: string;
  let bobHook: string;
  let aliceHook: string;

  before(async () => {
    d = await startHookd({ portalFrameAncestors: [HOST] });
    receiver = await startReceiver();
    aliceToken = await addUser(d, 'alice');
    bobToken = await addUser(d, 'bob');
    bobHook = (
      await createHook(
        d,
        { PathPattern: '/bob', Methods: ['POST'], Callback: `${receiver.url}/bob` },
        { token: bobToken },
      )
    ).Id;
    aliceHook = (
      await createHook(
        d,
        { PathPattern: '/alice', Methods: ['POST'], Callback: `${receiver.url}/alice` },
        { token: aliceToken },
      )
    ).Id;
  });
  after(async () => {
    await d?.close();
    await receiver?.close();
  });

  it('makes a one-time link on the console listener: 201 with Url and ExpiresAt (15 minutes by default)', async () => {
    const before = Date.now();
    const r = await api<{ Url: string; ExpiresAt: string; Scopes: string[]; ReadOnly: boolean }>(
      d.url,
      d.token,
      'POST',
      '/_hookd/portal-links',
      { User: 'alice' },
    );
    assert.equal(r.status, 201, r.text);
    assert.ok(r.body.Url.startsWith(`${d.consoleUrl}${P}/open/`), r.body.Url);
    const ttl = Date.parse(r.body.ExpiresAt) - before;
    assert.ok(ttl > 14 * 60_000 && ttl <= 15 * 60_000 + 5000, `ExpiresAt ${r.body.ExpiresAt}`);
    assert.deepEqual(r.body.Scopes, ['hooks:write', 'secrets', 'test', 'redeliver', 'live']);
    assert.equal(r.body.ReadOnly, false);
  });

  it('refuses bad input with a 400 naming the field and rule, an unknown user with a 404 naming User', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ User: 'alice', Ttl: '25h' }, 'Ttl', /at most|to 24h.*closest valid value is 24h/],
      [{ User: 'alice', Ttl: 'soon' }, 'Ttl', /duration such as 15m/],
      [{ User: 'alice', Ttl: '0s' }, 'Ttl', /from 1s/],
      [{ Ttl: '1h' }, 'User', /is required/],
      [{ User: 'admin' }, 'User', /not be the admin/],
      [{ User: 'alice', Scopes: ['users'] }, 'Scopes', /not a portal scope; known: hooks:write/],
      [{ User: 'alice', ReadOnly: 'yes' }, 'ReadOnly', /true or false/],
      [{ User: 'alice', Brand: { Accent: 'purple' } }, 'Brand.Accent', /#rrggbb/],
      [{ User: 'alice', Brand: { Theme: 'sepia' } }, 'Brand.Theme', /light.*dark/],
      [{ User: 'alice', Expires: '1h' }, 'Expires', /not a field/],
    ];
    for (const [body, field, rule] of cases) {
      const r = await api<{ errors?: { field: string; message: string }[] }>(
        d.url,
        d.token,
        'POST',
        '/_hookd/portal-links',
        body,
      );
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
      const e = r.body.errors?.find((x) => x.field === field);
      assert.ok(e, `${JSON.stringify(body)} names ${field}: ${r.text}`);
      assert.match(e.message, rule);
    }
    const unknown = await api(d.url, d.token, 'POST', '/_hookd/portal-links', { User: 'nobody' });
    assert.equal(unknown.status, 404);
    assert.match((unknown.body as { detail: string }).detail, /User: no user "nobody"/);
  });

  it('needs the admin or the portal permission', async () => {
    assert.equal((await api(d.url, undefined, 'POST', '/_hookd/portal-links', { User: 'bob' })).status, 401);
    const mine = await api(d.url, aliceToken, 'POST', '/_hookd/portal-links', { User: 'bob' });
    assert.equal(mine.status, 403);
    assert.match((mine.body as { detail: string }).detail, /"portal" permission/);
    const svc = await api(d.url, d.token, 'POST', '/_hookd/users', { Name: 'svc', Permissions: ['portal'] });
    assert.equal(svc.status, 201, svc.text);
    const t = await api<{ Token: string }>(d.url, d.token, 'POST', '/_hookd/users/svc/tokens', {});
    const made = await api(d.url, t.body.Token, 'POST', '/_hookd/portal-links', { User: 'bob', Ttl: '2h' });
    assert.equal(made.status, 201, made.text);
  });

  it('signs in once: the second open and an expired link answer 410 with a page that says so', async () => {
    const link = await portalLink(d, 'alice');
    const first = await fetch(link.body.Url, { redirect: 'manual' });
    assert.equal(first.status, 303);
    assert.equal(first.headers.get('location'), `${P}/hooks?from=link`);
    const cookie = first.headers.get('set-cookie')!;
    assert.match(cookie, /^hookd_portal=[A-Za-z0-9_-]{43}; Path=\/_hookd\/portal; HttpOnly; SameSite=Lax$/);
    const second = await fetch(link.body.Url, { redirect: 'manual' });
    assert.equal(second.status, 410);
    assert.match(await second.text(), /already used/);
    assert.equal(second.headers.get('set-cookie'), null);

    const short = await api<{ Url: string; ExpiresAt: string }>(
      d.url,
      d.token,
      'POST',
      '/_hookd/portal-links',
      {
        User: 'alice',
        Ttl: '1s',
      },
    );
    await until('the link expired', () => Date.now() > Date.parse(short.body.ExpiresAt));
    const late = await fetch(short.body.Url, { redirect: 'manual' });
    assert.equal(late.status, 410);
    assert.match(await late.text(), /expired/);
    const forged = await fetch(`${d.consoleUrl}${P}/open/${'A'.repeat(43)}`, { redirect: 'manual' });
    assert.equal(forged.status, 410);
    // A browser that did not keep the cookie (a frame of another site over plain HTTP) is told why.
    const lost = await fetch(`${d.consoleUrl}${P}/hooks?from=link`, { redirect: 'manual' });
    assert.equal(lost.status, 401);
    assert.match(
      await lost.text(),
      /Over plain HTTP, a browser keeps no cookie for a page shown inside another site/,
    );
  });

  it('over HTTPS (a trusted proxy says so) the cookie is SameSite=None; Secure; Partitioned', async () => {
    const t = await startHookd({ trustedProxies: ['127.0.0.1/32'] });
    try {
      const link = await portalLink(t, 'admin');
      assert.equal(link.status, 400, 'never for the admin');
      await addUser(t, 'carol');
      const ok = await portalLink(t, 'carol');
      const res = await fetch(ok.body.Url, { redirect: 'manual', headers: { 'x-forwarded-proto': 'https' } });
      assert.match(
        res.headers.get('set-cookie')!,
        /; Path=\/_hookd\/portal; HttpOnly; Secure; SameSite=None; Partitioned$/,
      );
    } finally {
      await t.close();
    }
  });

  it('may be framed by the listed origins only; a daemon that lists none refuses every frame', async () => {
    const s = await signIn(d, 'alice');
    const page = await get(d, '/hooks', s);
    const csp = page.headers.get('content-security-policy')!;
    assert.match(csp, new RegExp(`frame-ancestors ${HOST};`));
    assert.equal(page.headers.get('x-frame-options'), null);
    const t = await startHookd();
    try {
      await addUser(t, 'carol');
      const link = await portalLink(t, 'carol');
      const res = await fetch(link.body.Url, { redirect: 'manual' });
      assert.match(res.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
    } finally {
      await t.close();
    }
  });

  it("shows only the user's own hooks: another user's hook is 404 by id, by URL and by forged form", async () => {
    const s = await signIn(d, 'alice');
    const list = await get(d, '/hooks', s);
    assert.match(list.text, new RegExp(aliceHook));
    assert.doesNotMatch(list.text, new RegExp(bobHook));
    assert.equal((await get(d, `/hooks/${bobHook}`, s)).status, 404);
    assert.equal((await get(d, `/hooks/${bobHook}/edit`, s)).status, 404);
    assert.equal((await post(d, `/hooks/${bobHook}/secret`, s)).status, 404);
    assert.equal((await post(d, `/hooks/${bobHook}/secret/rotate`, s)).status, 404);
    assert.equal((await post(d, `/hooks/${bobHook}/test`, s)).status, 404);
    const replace = await post(d, `/hooks/${bobHook}`, s, {
      PathPattern: '/bob',
      Callback: `${receiver.url}/stolen`,
    });
    assert.equal(replace.status, 404);
    assert.equal((await post(d, `/hooks/${bobHook}/delete`, s)).status, 404);
    const still = await api<{ Callback: string }>(d.url, bobToken, 'GET', `/hooks/${bobHook}`);
    assert.equal(still.status, 200, "bob's hook is still there");
    assert.equal(still.body.Callback, `${receiver.url}/bob`);
  });

  it('has no admin pages, no console session and no API token', async () => {
    const s = await signIn(d, 'alice');
    for (const path of ['/users', '/users/alice/tokens', '/overview', '/signin', '/assets/../users']) {
      const r = await get(d, path, s);
      assert.equal(r.status, 404, `${path}: ${r.status} ${r.text.slice(0, 200)}`);
    }
    assert.equal((await get(d, '/', s)).headers.get('location'), `${P}/hooks`);
    const console = await fetch(`${d.consoleUrl}/_hookd/console/`, {
      headers: { cookie: s.cookie },
      redirect: 'manual',
    });
    assert.equal(console.status, 303);
    assert.match(console.headers.get('location')!, /signin$/);
    const value = s.cookie.split('=')[1]!;
    assert.equal((await api(d.url, value, 'GET', '/hooks')).status, 401);
    assert.equal((await api(d.url, undefined, 'GET', '/hooks', undefined, { cookie: s.cookie })).status, 401);
  });

  it('read-only and scopes: writes and unlisted actions are refused (403), reading works', async () => {
    const ro = await signIn(d, 'alice', { ReadOnly: true });
    assert.equal((await get(d, `/hooks/${aliceHook}`, ro)).status, 200);
    assert.equal((await post(d, `/hooks/${aliceHook}/secret`, ro)).status, 200, 'revealing is reading');
    const del = await post(d, `/hooks/${aliceHook}/delete`, ro);
    assert.equal(del.status, 403);
    assert.match(del.text, /read-only/);
    assert.equal((await post(d, `/hooks/${aliceHook}/secret/rotate`, ro)).status, 403);
    assert.equal((await get(d, '/hooks/new', ro)).status, 403);
    const narrow = await signIn(d, 'alice', { Scopes: ['live'] });
    assert.equal((await post(d, `/hooks/${aliceHook}/secret`, narrow)).status, 403);
    assert.equal((await post(d, `/hooks/${aliceHook}/test`, narrow)).status, 403);
    assert.equal((await get(d, '/live', narrow)).status, 200);
    assert.equal((await get(d, `/hooks/${aliceHook}`, narrow)).status, 200);
  });

  it('holds CSRF: a POST without the session token is refused, with it the action runs', async () => {
    const s = await signIn(d, 'alice');
    assert.equal((await post(d, `/hooks/${aliceHook}/secret/rotate`, s, {}, false)).status, 403);
    const ok = await post(d, `/hooks/${aliceHook}/secret/rotate`, s);
    assert.equal(ok.status, 200);
    assert.deepEqual(JSON.parse(ok.headers.get('hx-trigger')!), {
      'hookd:secret-rotated': { type: 'hookd:secret-rotated', hookId: aliceHook },
    });
  });

  it("takes its look from the brand file, a link's Brand over it; a bad file stops the start", async () => {
    const dir = tempDir();
    const file = join(dir, 'brand.json');
    writeFileSync(file, JSON.stringify({ Title: 'Acme webhooks', Accent: '#7c3aed', Theme: 'dark' }));
    const t = await startHookd({ portalBrandFile: file });
    try {
      await addUser(t, 'carol');
      const s = await signIn(t, 'carol');
      const page = await get(t, '/hooks', s);
      assert.match(page.text, /<title>Hooks · Acme webhooks<\/title>/);
      assert.match(page.text, /<html lang="en" data-theme="dark">/);
      const css = await get(t, '/brand.css', s);
      assert.match(css.text, /--portal-accent: #7c3aed/);
      const own = await signIn(t, 'carol', {
        Brand: { Title: 'Carol & Co', LogoUrl: 'https://cdn.example.com/logo.png', Theme: 'light' },
      });
      const branded = await get(t, '/hooks', own);
      assert.match(branded.text, /<title>Hooks · Carol &amp; Co<\/title>/);
      assert.match(branded.text, /<img class="logo" src="https:\/\/cdn.example.com\/logo.png" alt=""/);
      assert.match(
        branded.headers.get('content-security-policy')!,
        /img-src 'self' data: https:\/\/cdn.example.com;/,
      );
      assert.match(
        (await get(t, '/brand.css', own)).text,
        /--portal-accent: #7c3aed/,
        'the file fills what the link leaves out',
      );
    } finally {
      await t.close();
    }
    writeFileSync(file, JSON.stringify({ Accent: 'blue' }));
    await assert.rejects(
      startHookd({ portalBrandFile: file }),
      /--portal-brand-file .*brand.json: Accent must be a colour/,
    );
  });
});
