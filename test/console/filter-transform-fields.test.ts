import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EMPTY_FORM } from '../../src/console/hook-form.js';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';

// The hook editor has Filter and Transform fields: their errors show beside them as the user
// types, and the dry run's "try it" box judges a request's headers and body with them.

let d: TestDaemon;
before(async () => {
  d = await startHookd();
});
after(() => d?.close());

async function session(root: string) {
  const signin = await fetch(`${root}/signin`);
  const pre = signin.headers.getSetCookie()[0]!.split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await signin.text())![1]!;
  const res = await fetch(`${root}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, token: d.token }),
  });
  const cookie = res.headers.getSetCookie()[0]!.split(';')[0]!;
  const page = await (await fetch(`${root}/hooks/new`, { headers: { cookie } })).text();
  const token = /name="csrf-token" content="([^"]+)"/.exec(page)![1]!;
  const post = (path: string, form: Record<string, string>) =>
    fetch(`${root}${path}`, {
      method: 'POST',
      headers: {
        cookie,
        'hx-request': 'true',
        'x-csrf-token': token,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams(form),
    }).then((r) => r.text());
  return { page, post };
}

describe('the console editor: Filter and Transform', () => {
  it('has both fields, shows their errors inline, and the try-it box applies them', async () => {
    const root = `${d.consoleUrl}/_hookd/console`;
    const { page, post } = await session(root);
    assert.match(page, /<textarea id="f-Filter" name="Filter"/);
    assert.match(page, /<textarea id="f-Transform" name="Transform"/);
    assert.match(page, /name="TryBody"/);
    const base = {
      ...EMPTY_FORM,
      PathPattern: '/r/(*)',
      Methods: 'POST',
      Type: '0',
      Callback: 'https://chat.example/h',
    };
    const bad = await post('/hooks/validate', {
      ...base,
      Filter: 'requst.body.x == 1',
      Transform: 'function transform(e) {\n  return {;\n}',
    });
    const slot = (name: string) => new RegExp(`id="err-${name}"[^>]*>([^<]*)`).exec(bad)?.[1] ?? '';
    assert.match(
      slot('Filter'),
      /undeclared reference to &#39;requst&#39; at 1:1; did you mean &#39;request&#39;\?|undeclared reference to 'requst' at 1:1; did you mean 'request'\?/,
    );
    assert.match(slot('Transform'), /SyntaxError: .* at 2:\d+/);
    const tried = await post('/hooks/dry-run', {
      ...base,
      Filter: 'request.body.quality == "bad"',
      Transform: 'function transform(e) { return { payload: { text: "bad: " + e.captures[0] } }; }',
      Method: 'POST',
      Path: '/r/7',
      TryBody: '{"quality": "bad"}',
    });
    assert.match(tried, /Filter: matched/);
    assert.match(tried, /bad: 7/);
    const missed = await post('/hooks/dry-run', {
      ...base,
      Filter: 'request.body.quality == "bad"',
      Method: 'POST',
      Path: '/r/7',
      TryBody: '{"quality": "good"}',
    });
    assert.match(missed, /Filter: no match/);
  });
});
