import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { onConsoleOrigin, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook } from '../helpers/servers.js';
import { cleanEnv, runInProcess } from './helpers.js';

// A broker Callback's password is not shown in a table or a page (docs/DECISIONS.md "Where
// credentials are shown"); -o json keeps the hook as stored, so apply, diff and scripts see it.

const CALLBACK = 'amqp://guest:s3cret@127.0.0.1:5672/%2F?exchange=ts.events';
let d: TestDaemon;
let env: NodeJS.ProcessEnv;
let id: string;

before(async () => {
  d = await startHookd();
  env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
  id = (await createHook(d, { PathPattern: '/cred/(*)', Methods: ['GET'], Callback: CALLBACK })).Id;
});
after(async () => {
  await d.close();
});

describe('credentials in tables', () => {
  for (const tty of [true, false]) {
    const mode = tty ? 'TTY' : 'piped';
    for (const args of [
      ['list'],
      ['list', '-o', 'wide'],
      ['get', 'ID', '-o', 'table'],
      ['match', 'GET', '/cred/1'],
    ]) {
      it(`hookctl ${args.join(' ')} shows guest:REDACTED, not the password (${mode})`, async () => {
        const r = await runInProcess(
          args.map((a) => (a === 'ID' ? id : a)),
          { env, tty },
        );
        assert.equal(r.code, 0, r.stderr);
        assert.doesNotMatch(r.stdout, /s3cret/);
        // A terminal's table may shorten the column; piped, it is whole.
        if (!tty) assert.match(r.stdout, /guest:REDACTED@127\.0\.0\.1/);
      });
    }
  }

  it('-o json keeps the Callback as stored', async () => {
    const r = await runInProcess(['get', id, '-o', 'json'], { env, tty: false });
    assert.equal((JSON.parse(r.stdout) as { Callback: string }).Callback, CALLBACK);
  });

  it("the console's hook page shows no password", async () => {
    const c = onConsoleOrigin(d);
    const form = await fetch(`${c.url}/_hookd/console/signin`);
    const pre = form.headers.getSetCookie()[0]!.split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const signed = await fetch(`${c.url}/_hookd/console/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, token: d.token }),
    });
    const cookie = signed.headers.getSetCookie()[0]!.split(';')[0]!;
    for (const path of [`/hooks/${id}`, '/hooks']) {
      const text = await (await fetch(`${c.url}/_hookd/console${path}`, { headers: { cookie } })).text();
      assert.doesNotMatch(text, /s3cret/, path);
    }
  });
});
