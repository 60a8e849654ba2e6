import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONSOLE_CSP } from '../../src/console/console.js';
import { formToHook, hookToForm } from '../../src/console/hook-form.js';
import { escapeHtml, html } from '../../src/console/html.js';
import { SessionStore } from '../../src/console/sessions.js';
import type { Hook } from '../../src/hook/hook.js';
import { onConsoleOrigin, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { addUser, createHook, startReceiver } from '../helpers/servers.js';

const ROOT = '/_hookd/console';

/** The sign-in form's one-time value and cookie, then the session cookie (or the refusal). */
async function signIn(url: string, token: string, headers: Record<string, string> = {}) {
  const form = await fetch(`${url}${ROOT}/signin`, { headers });
  const pre = form.headers.getSetCookie()[0]!.split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const res = await fetch(`${url}${ROOT}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...headers, cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, token }),
  });
  const setCookie = res.headers.getSetCookie();
  return { res, setCookie, cookie: setCookie[0]?.split(';')[0] ?? '' };
}

async function csrfOf(url: string, cookie: string): Promise<string> {
  const page = await (await fetch(`${url}${ROOT}/`, { headers: { cookie } })).text();
  return /name="csrf-token" content="([^"]+)"/.exec(page)![1]!;
}

describe('console sessions (unit)', () => {
  it('ends a session after the idle limit and after the absolute limit, however active', () => {
    let now = 1_000_000;
    const store = new SessionStore({ idleMs: 1000, absoluteMs: 5000 }, () => now);
    try {
      const a = store.create('alice', 'tok1');
      now += 900;
      assert.equal(store.get(a.id)?.user, 'alice', 'within the idle limit');
      now += 1001;
      assert.equal(store.get(a.id), undefined, 'idle too long');
      const b = store.create('alice');
      for (let i = 0; i < 5; i++) {
        now += 900;
        assert.ok(store.get(b.id), `active at ${i}`);
      }
      now += 900;
      assert.equal(store.get(b.id), undefined, 'past the absolute limit');
    } finally {
      store.close();
    }
  });

  it('keeps only a hash of the session id, and random ids and CSRF tokens', () => {
    const store = new SessionStore();
    try {
      const a = store.create('alice');
      const b = store.create('alice');
      assert.notEqual(a.id, b.id);
      assert.notEqual(a.session.csrf, b.session.csrf);
      assert.ok(a.id.length >= 43, '256 bits');
      const keys = [...(store as unknown as { byHash: Map<string, unknown> }).byHash.keys()];
      assert.ok(!keys.includes(a.id) && keys.every((k) => /^[0-9a-f]{64}$/.test(k)));
      store.end(a.id);
      assert.equal(store.get(a.id), undefined);
      store.endUser('alice');
      assert.equal(store.get(b.id), undefined);
    } finally {
      store.close();
    }
  });
});

describe('console HTML (unit)', () => {
  it('escapes every interpolated value, attributes included', () => {
    const evil = `<script>x</script>"><img onerror='y'>\`javascript:z`;
    const out = html`<a title="${evil}">${evil}</a>`.text;
    assert.ok(!out.includes('<script>') && !out.includes('<img') && !out.includes(`"><`));
    assert.equal(escapeHtml(`&<>"'\``), '&amp;&lt;&gt;&quot;&#39;&#96;');
    assert.equal(html`${[html`<b>`, '<i>']}`.text, '<b>&lt;i&gt;', 'trusted parts pass, others are escaped');
  });

  it('turns the form into the hook document the API takes, and a hook back into the form', () => {
    const doc = formToHook({
      PathPattern: '/a/(*)',
      Methods: 'get, POST',
      Type: '0',
      StatusCodeWhiteList: '',
      StatusCodeBlackList: '500 502',
      Callback: 'https://r.example/x',
      CallbackMethod: 'PUT',
      Headers: 'X-A: 1\nX-B: two: three',
      CallbackContent: '',
      RetrySchedule: '0, 5',
      Persist: 'on',
    });
    assert.deepEqual(doc, {
      PathPattern: '/a/(*)',
      Methods: ['get', 'POST'],
      Type: 0,
      StatusCodeWhiteList: [],
      StatusCodeBlackList: [500, 502],
      Callback: 'https://r.example/x',
      CallbackMethod: 'PUT',
      Headers: { 'X-A': '1', 'X-B': 'two: three' },
      Persist: true,
      RetrySchedule: [0, 5],
    });
    const back = hookToForm({ ...(doc as unknown as Hook), CallbackContentMediaType: 'application/json' });
    assert.equal(back.Headers, 'X-A: 1\nX-B: two: three');
    assert.equal(back.Methods, 'get, POST');
  });
});

describe('console over HTTP', () => {
  let d: TestDaemon;
  before(async () => {
    d = onConsoleOrigin(await startHookd({ trustedProxies: ['127.0.0.1'] }));
  });
  after(async () => d?.close());

  it('sends a strict CSP without inline script or style, and no framing, on every answer', async () => {
    for (const path of ['/signin', '/', '/assets/console.js', '/nope']) {
      const res = await fetch(`${d.url}${ROOT}${path}`, { redirect: 'manual' });
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.equal(csp, CONSOLE_CSP, path);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    }
    const page = await (await fetch(`${d.url}${ROOT}/signin`)).text();
    assert.doesNotMatch(
      page,
      /<script>|<script [^>]*>[^<]|\son[a-z]+=|style=/i,
      'no inline script, handler or style',
    );
  });

  it('serves htmx and uPlot from their installed packages, and its own files', async () => {
    for (const [name, type] of [
      ['htmx.min.js', 'text/javascript'],
      ['uPlot.iife.min.js', 'text/javascript'],
      ['uPlot.min.css', 'text/css'],
      ['console.css', 'text/css'],
    ]) {
      const res = await fetch(`${d.url}${ROOT}/assets/${name}`);
      assert.equal(res.status, 200, name);
      assert.ok(res.headers.get('content-type')!.startsWith(type!), name);
      assert.ok((await res.arrayBuffer()).byteLength > 1000, name);
    }
  });

  it('signs in only with a valid token and the form’s own one-time value', async () => {
    const bad = await signIn(d.url, 'hkd_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    assert.equal(bad.res.status, 401);
    assert.ok(!bad.setCookie.some((c) => c.startsWith('hookd_console=')));
    // A cross-site form cannot sign the browser in as someone else: no matching one-time cookie.
    const forged = await fetch(`${d.url}${ROOT}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: 'x', token: d.token }),
    });
    assert.equal(forged.status, 403);
    const good = await signIn(d.url, d.token);
    assert.equal(good.res.status, 303);
    assert.match(
      good.setCookie[0]!,
      /^hookd_console=[A-Za-z0-9_-]{43}; Path=\/_hookd\/console; HttpOnly; SameSite=Strict$/,
    );
  });

  it('marks the cookie Secure behind a trusted proxy that says https, and only then', async () => {
    const viaProxy = await signIn(d.url, d.token, { 'x-forwarded-proto': 'https' });
    assert.match(viaProxy.setCookie[0]!, /; Secure/);
    const other = onConsoleOrigin(await startHookd());
    try {
      const untrusted = await signIn(other.url, other.token, { 'x-forwarded-proto': 'https' });
      assert.doesNotMatch(untrusted.setCookie[0]!, /Secure/, 'an untrusted peer’s header is not believed');
    } finally {
      await other.close();
    }
  });

  it('refuses state-changing requests without the session’s CSRF token (form field or header)', async () => {
    const { cookie } = await signIn(d.url, d.token);
    const csrf = await csrfOf(d.url, cookie);
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${d.url}${ROOT}/hooks/validate`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body,
      });
    assert.equal((await post({}, 'PathPattern=/a')).status, 403);
    assert.equal((await post({ 'x-csrf-token': 'wrong' }, 'PathPattern=/a')).status, 403);
    assert.equal((await post({ 'x-csrf-token': csrf }, 'PathPattern=/a')).status, 200);
    assert.equal((await post({}, `PathPattern=/a&_csrf=${encodeURIComponent(csrf)}`)).status, 200);
    // Another session's token does not do either.
    const other = await signIn(d.url, d.token);
    assert.equal(
      (await post({ 'x-csrf-token': await csrfOf(d.url, other.cookie) }, 'PathPattern=/a')).status,
      403,
    );
  });

  it('an edit in the form keeps what the form does not show (signature schemes, ordering, verification)', async () => {
    const hook = await createHook(d, {
      PathPattern: '/kept/(*)',
      Methods: ['GET'],
      Callback: 'http://127.0.0.1:9/kept',
      Signature: { Schemes: ['v1', 'github'] },
      Ordering: { Key: '$1' },
      Verification: 'off',
    });
    const { cookie } = await signIn(d.url, d.token);
    const csrf = await csrfOf(d.url, cookie);
    const form = new URLSearchParams({ ...hookToForm(hook), Name: 'kept-through-edit', _csrf: csrf });
    const res = await fetch(`${d.url}${ROOT}/hooks/${hook.Id}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    assert.equal(res.status, 303, await res.text());
    const stored = (await (
      await fetch(`${d.url}/hooks/${hook.Id}`, { headers: { authorization: `Bearer ${d.token}` } })
    ).json()) as Hook;
    assert.equal(stored.Name, 'kept-through-edit', "the form's own change is applied");
    assert.deepEqual(stored.Signature, { Schemes: ['v1', 'github'] });
    assert.deepEqual(stored.Ordering, { Key: '$1' });
    assert.equal(stored.Verification, 'off');
  });

  it('shows the server lint warnings next to the fields as the user types', async () => {
    const { cookie } = await signIn(d.url, d.token);
    const csrf = await csrfOf(d.url, cookie);
    const form = new URLSearchParams({
      PathPattern: '/lint/(*)',
      Methods: 'GET',
      Type: '1',
      Callback: 'http://127.0.0.1:9/hook',
      CallbackContent: '{"p":"$REQEST_PATH"}',
      CallbackContentMediaType: 'application/json',
    });
    const res = await fetch(`${d.url}${ROOT}/hooks/validate`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'x-csrf-token': csrf },
      body: form,
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    // The warning shows once, in amber beside its field; the summary only counts it.
    assert.match(text, /<p class="warning">1 warning: the hook can be saved/);
    assert.match(
      text,
      /id="err-CallbackContent"[^>]*><span class="field-warning">Warning: [^<]*REQEST_PATH[^<]*REQUEST_PATH/,
    );
    assert.doesNotMatch(text, /<p class="warning">Warning: CallbackContent/, 'not repeated at the top');
    assert.doesNotMatch(text, /problems? to fix/, 'a warning does not stop saving');
  });

  it('ends the session at sign-out and when its token is revoked', async () => {
    const { cookie } = await signIn(d.url, d.token);
    const csrf = await csrfOf(d.url, cookie);
    const out = await fetch(`${d.url}${ROOT}/signout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf }),
    });
    assert.equal(out.status, 303);
    const after = await fetch(`${d.url}${ROOT}/hooks`, { headers: { cookie }, redirect: 'manual' });
    assert.equal(after.status, 303);
    assert.match(after.headers.get('location')!, /\/signin$/);

    const token = await addUser(d, 'carol');
    const carol = await signIn(d.url, token);
    assert.equal((await fetch(`${d.url}${ROOT}/`, { headers: { cookie: carol.cookie } })).status, 200);
    const tokens = await d.hookd.store.listTokens('carol');
    await d.hookd.store.revokeToken(tokens[0]!.id);
    const revoked = await fetch(`${d.url}${ROOT}/`, {
      headers: { cookie: carol.cookie },
      redirect: 'manual',
    });
    assert.equal(revoked.status, 303, 'a revoked token ends its sessions');
  });

  it('is off with --no-console (consoleEnabled: false): its paths are not served', async () => {
    const off = await startHookd({ consoleEnabled: false });
    try {
      const res = await fetch(`${off.url}${ROOT}/signin`);
      assert.equal(res.status, 404);
      assert.match(res.headers.get('content-type') ?? '', /problem\+json/);
    } finally {
      await off.close();
    }
  });

  it('reveals and rotates a secret, counts before a bulk redelivery, dry-runs, and deletes', async () => {
    const receiver = await startReceiver({ status: 500 });
    try {
      const hook = await createHook(d, {
        PathPattern: '/_hookd-test/(*)',
        Methods: ['*'],
        Type: 0,
        Callback: `${receiver.url}/r`,
        RetrySchedule: [0],
      });
      const { cookie } = await signIn(d.url, d.token);
      const csrf = await csrfOf(d.url, cookie);
      const htmx = (path: string, form: Record<string, string> = {}) =>
        fetch(`${d.url}${ROOT}${path}`, {
          method: 'POST',
          redirect: 'manual',
          headers: {
            cookie,
            'hx-request': 'true',
            'x-csrf-token': csrf,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams(form),
        });
      const secret = /whsec_[A-Za-z0-9+/=]+/.exec(await (await htmx(`/hooks/${hook.Id}/secret`)).text())![0];
      const rotated = await (await htmx(`/hooks/${hook.Id}/secret/rotate`)).text();
      assert.match(rotated, /Rotated/);
      assert.doesNotMatch(rotated, new RegExp(secret.replace(/[+/]/g, '\\$&')), 'a new secret');

      const dry = await (await htmx('/hooks/dry-run', { Method: 'GET', Path: '/_hookd-test/7' })).text();
      assert.match(dry, new RegExp(`${hook.Id}`));
      assert.match(dry, /\/r/);

      // Three reported requests fail at the receiver (one attempt each): the count comes first.
      await fetch(`${d.url}/_hookd/report`, {
        method: 'POST',
        headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
        body: JSON.stringify([1, 2, 3].map((i) => ({ Method: 'GET', Path: `/_hookd-test/${i}` }))),
      });
      await receiver.waitFor(3, 10_000);
      let count = '';
      for (let t = Date.now(); Date.now() - t < 10_000; await new Promise((r) => setTimeout(r, 200))) {
        count = await (await htmx(`/hooks/${hook.Id}/redeliver/count`, { status: 'failed' })).text();
        if (/data-count="3"/.test(count)) break;
      }
      assert.match(count, /queues <strong data-count="3">3<\/strong> failed deliveries again/);
      assert.equal(receiver.calls.length, 3, 'counting redelivers nothing');
      const done = await (await htmx(`/hooks/${hook.Id}/redeliver`, { status: 'failed' })).text();
      assert.match(done, /3 deliveries queued again/);
      await receiver.waitFor(6, 10_000);

      const del = await htmx(`/hooks/${hook.Id}/delete`);
      assert.equal(del.status, 303);
      assert.equal(await d.hookd.hooks.find(hook.Id), undefined);
    } finally {
      await receiver.close();
    }
  });

  it('lets the admin manage users, scopes and tokens on the Users page; to anyone else it is 404', async () => {
    const { cookie } = await signIn(d.url, d.token);
    const csrf = await csrfOf(d.url, cookie);
    const post = (path: string, form: Record<string, string>) =>
      fetch(`${d.url}${ROOT}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrf, ...form }),
      });
    const list = await fetch(`${d.url}${ROOT}/users`, { headers: { cookie } });
    assert.equal(list.status, 200);
    assert.match(await list.text(), />admin</);
    const bad = await post('/users', { Name: '1nvalid' });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /is invalid/);
    const added = await post('/users', { Name: 'frank', Scopes: 'own' });
    assert.equal(added.status, 303);
    assert.equal(added.headers.get('location'), `${ROOT}/users/frank`);
    assert.deepEqual((await d.hookd.store.getUser('frank'))?.scopes, ['own']);
    const created = await post('/users/frank/tokens', { Label: 'laptop' });
    const token = /id="new-token">([^<]+)</.exec(await created.text())![1]!;
    const frank = await signIn(d.url, token);
    assert.equal(frank.res.status, 303, 'the new token signs in');
    for (const path of ['/users', '/users/admin']) {
      const r = await fetch(`${d.url}${ROOT}${path}`, { headers: { cookie: frank.cookie } });
      assert.equal(r.status, 404, `${path} for a non-admin`);
    }
    assert.equal((await fetch(`${d.url}${ROOT}/`, { headers: { cookie: frank.cookie } })).status, 200);
    const tokenId = token.split('_')[1]!;
    assert.equal((await post(`/users/frank/tokens/${tokenId}/revoke`, {})).status, 303);
    assert.equal(
      (await fetch(`${d.url}${ROOT}/`, { headers: { cookie: frank.cookie }, redirect: 'manual' })).status,
      303,
      'revoking the token ended its session',
    );
    assert.equal((await post('/users/frank/delete', {})).status, 303);
    assert.equal(await d.hookd.store.getUser('frank'), undefined);
  });
});

describe('console sign-in through the identity provider', () => {
  let d: TestDaemon;
  before(async () => {
    d = onConsoleOrigin(
      await startHookd({ identityHeader: 'X-Forwarded-User', trustedProxies: ['127.0.0.1'] }),
    );
  });
  after(async () => d?.close());

  it('signs a browser the provider identifies in without a token, and follows the provider', async () => {
    const first = await fetch(`${d.url}${ROOT}/`, { headers: { 'x-forwarded-user': 'dave' } });
    assert.equal(first.status, 200);
    assert.match(await first.text(), /<span>dave<\/span>/);
    const cookie = first.headers.getSetCookie()[0]!.split(';')[0]!;
    assert.match(cookie, /^hookd_console=/);
    // The same session while the provider names the same user…
    const again = await fetch(`${d.url}${ROOT}/hooks`, { headers: { cookie, 'x-forwarded-user': 'dave' } });
    assert.equal(again.status, 200);
    assert.equal(again.headers.getSetCookie().length, 0);
    // …and not once it names someone else or no one.
    const other = await fetch(`${d.url}${ROOT}/`, { headers: { cookie, 'x-forwarded-user': 'erin' } });
    assert.match(await other.text(), /<span>erin<\/span>/);
    const anonymous = await fetch(`${d.url}${ROOT}/`, { headers: { cookie }, redirect: 'manual' });
    assert.equal(anonymous.status, 303);
    assert.match(anonymous.headers.get('location')!, /\/signin$/);
  });
});
