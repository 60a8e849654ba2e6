import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EMPTY_FORM, formToHook, hookToForm } from '../../src/console/hook-form.js';
import type { Hook } from '../../src/hook/index.js';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';

// The hook editor has a field for ContentEscape: the form makes the field, a stored hook fills it.

describe('the console form and ContentEscape', () => {
  it('the form sends the mode chosen, none as no field at all, and shows a stored one', () => {
    const form = { ...EMPTY_FORM, PathPattern: '/x', Callback: 'https://chat.example/h' };
    assert.equal(formToHook({ ...form, ContentEscape: 'slack' }).ContentEscape, 'slack');
    assert.equal('ContentEscape' in formToHook(form), false);
    const hook = { ...formToHook(form), ContentEscape: 'discord' } as unknown as Hook;
    assert.equal(hookToForm(hook).ContentEscape, 'discord');
    assert.equal(hookToForm({ ...hook, ContentEscape: undefined } as unknown as Hook).ContentEscape, 'none');
  });

  let d: TestDaemon;
  before(async () => {
    d = await startHookd();
  });
  after(async () => {
    await d?.close();
  });

  it('the new-hook page offers every mode, and the live check warns about a chat body without one', async () => {
    const root = `${d.consoleUrl}/_hookd/console`;
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
    const select = /<select id="f-ContentEscape" name="ContentEscape"[^>]*>([\s\S]*?)<\/select>/.exec(page);
    assert.ok(select, 'a ContentEscape select');
    assert.deepEqual(
      [...select[1]!.matchAll(/value="([^"]+)"/g)].map((m) => m[1]),
      ['none', 'slack', 'mattermost', 'discord', 'markdown'],
    );
    const token = /name="csrf-token" content="([^"]+)"/.exec(page)![1]!;
    const check = await fetch(`${root}/hooks/validate`, {
      method: 'POST',
      headers: {
        cookie,
        'hx-request': 'true',
        'x-csrf-token': token,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        ...EMPTY_FORM,
        PathPattern: '/r/(*)',
        Callback: 'https://chat.example/h',
        CallbackContent: '{"text": "read $1"}',
      }),
    });
    const html = await check.text();
    assert.match(
      html,
      /id="err-ContentEscape"[^>]*>.*Warning: is not set, and CallbackContent looks like a chat message/s,
    );
  });
});
