import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { onConsoleOrigin, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook } from '../helpers/servers.js';

// What the console's pages say about a hook, read over real HTTP from a real hookd: the hooks
// list names each callback's scheme, the editor folds the optional sections a hook does not use.

const ROOT = '/_hookd/console';
let d: TestDaemon;
let cookie: string;

/** Signs in with the admin token; the session cookie. */
async function signIn(): Promise<string> {
  const form = await fetch(`${onConsoleOrigin(d).url}${ROOT}/signin`);
  const pre = form.headers.getSetCookie()[0]!.split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const res = await fetch(`${onConsoleOrigin(d).url}${ROOT}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, token: d.token }),
  });
  return res.headers.getSetCookie()[0]!.split(';')[0]!;
}

const page = async (path: string): Promise<string> => {
  const res = await fetch(`${onConsoleOrigin(d).url}${ROOT}${path}`, { headers: { cookie } });
  assert.equal(res.status, 200, path);
  return res.text();
};

before(async () => {
  d = await startHookd();
  cookie = await signIn();
});
after(async () => {
  await d.close();
});

describe('the hooks list', () => {
  it('shows each callback with its scheme, never its credentials', async () => {
    const urls = [
      'amqp://guest:guest@127.0.0.1:5672/%2F?exchange=ts.events',
      'mqtt://127.0.0.1:1883/ts',
      'http://127.0.0.1:9/h',
    ];
    for (const [i, Callback] of urls.entries()) {
      await createHook(d, { PathPattern: `/list-${i}`, Methods: ['GET'], Callback, Persist: false });
    }
    const text = await page('/hooks');
    assert.match(text, /<td>amqp:\/\/127\.0\.0\.1:5672<\/td>/);
    assert.match(text, /<td>mqtt:\/\/127\.0\.0\.1:1883<\/td>/);
    assert.match(text, /<td>http:\/\/127\.0\.0\.1:9<\/td>/);
    assert.doesNotMatch(text, /guest/);
  });
});

describe('the hook editor', () => {
  const folds = (text: string) =>
    Object.fromEntries(
      [...text.matchAll(/<details class="field wide fold (auth|tls)"( open)?>/g)].map((m) => [
        m[1],
        m[2] === ' open',
      ]),
    );

  it('folds the OAuth2 and mTLS sections of a hook that has neither', async () => {
    const h = await createHook(d, {
      PathPattern: '/plain',
      Methods: ['GET'],
      Callback: 'https://127.0.0.1:9/h',
    });
    assert.deepEqual(folds(await page(`/hooks/${h.Id}/edit`)), { auth: false, tls: false });
    assert.deepEqual(folds(await page('/hooks/new')), { auth: false, tls: false });
  });

  it('opens the section a hook uses', async () => {
    const h = await createHook(d, {
      PathPattern: '/oauth',
      Methods: ['GET'],
      Callback: 'https://127.0.0.1:9/h',
      Auth: { OAuth2: { TokenUrl: 'https://127.0.0.1:9/token', ClientId: 'c', ClientSecret: 's' } },
    });
    assert.deepEqual(folds(await page(`/hooks/${h.Id}/edit`)), { auth: true, tls: false });
  });
});
