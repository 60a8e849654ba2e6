import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { onConsoleOrigin, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook, type Receiver, startReceiver } from '../helpers/servers.js';
import { cleanEnv, runInProcess, startStreaming } from './helpers.js';

// How hookctl names hooks and marks test events, the way `listen` and the console do: `tail`
// on a terminal shows hook/NAME for a named hook (the Id for an unnamed one) and [test] for a
// test event; `listen --print-secret` prints the Id once for an unnamed hook; piped `list` keeps
// one shape (NAME always the second column) whether or not any hook has a Name.

const ROOT = '/_hookd/console';
let d: TestDaemon;
let receiver: Receiver;
let env: NodeJS.ProcessEnv;

before(async () => {
  receiver = await startReceiver();
  d = onConsoleOrigin(await startHookd());
  env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
});
after(async () => {
  await d.close();
  await receiver.close();
});

async function fire(path: string): Promise<void> {
  const res = await fetch(`${d.url}/_hookd/report`, {
    method: 'POST',
    headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
    body: JSON.stringify([{ Method: 'GET', Path: path, StatusCode: 200, Phase: 'after' }]),
  });
  assert.equal(res.status, 202, await res.text());
}

/** The console's "Send a test event" for a hook, as the browser posts it. */
async function sendTestEvent(id: string): Promise<void> {
  const form = await fetch(`${d.url}${ROOT}/signin`);
  const pre = form.headers.getSetCookie()[0]!.split(';')[0]!;
  const signinCsrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const signedIn = await fetch(`${d.url}${ROOT}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: signinCsrf, token: d.token }),
  });
  const cookie = signedIn.headers.getSetCookie()[0]!.split(';')[0]!;
  const page = await (await fetch(`${d.url}${ROOT}/`, { headers: { cookie } })).text();
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(page)![1]!;
  const res = await fetch(`${d.url}${ROOT}/hooks/${id}/test`, {
    method: 'POST',
    headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
  });
  assert.equal(res.status, 200, await res.text());
}

describe('hook labels and test marks in hookctl', () => {
  it('piped list: NAME is always the second column, before and after a first hook gets a Name', async () => {
    const unnamed = await createHook(d, {
      PathPattern: '/plain',
      Methods: ['GET'],
      Callback: `${receiver.url}/p`,
    });
    const before = await runInProcess(['list'], { env, tty: false });
    assert.equal(before.code, 0, before.stderr);
    const row = before.stdout
      .split('\n')
      .find((l) => l.startsWith(unnamed.Id))!
      .split('\t');
    assert.equal(row[1], '', 'an empty NAME column');
    await createHook(d, {
      Name: 'first-named',
      PathPattern: '/named',
      Methods: ['GET'],
      Callback: `${receiver.url}/n`,
    });
    const afterNamed = await runInProcess(['list'], { env, tty: false });
    const rows = afterNamed.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    assert.deepEqual(new Set(rows.map((r) => r.length)), new Set([row.length]), 'the same number of columns');
    assert.ok(rows.some((r) => r[1] === 'first-named'));
  });

  it('tail on a terminal: hook/NAME for a named hook, the Id for an unnamed one, [test] for a test event', async () => {
    const named = await createHook(d, {
      Name: 'tail-named',
      PathPattern: '/tail-named',
      Methods: ['GET'],
      Callback: `${receiver.url}/tn`,
    });
    const plain = await createHook(d, {
      PathPattern: '/tail-plain',
      Methods: ['GET'],
      Callback: `${receiver.url}/tp`,
    });
    const tail = startStreaming('tail', [], { env, tty: true });
    const json = startStreaming('tail', ['-o', 'json'], { env, tty: false });
    try {
      await tail.stderr.waitFor(/Ready!/);
      await json.stderr.waitFor(/Ready!/);
      await fire('/tail-named');
      const namedLine = await tail.stdout.waitFor(/hook\/tail-named +GET \/tail-named/);
      assert.doesNotMatch(namedLine, new RegExp(`${named.Id}`));
      await fire('/tail-plain');
      await tail.stdout.waitFor(new RegExp(`${plain.Id} +GET /tail-plain`));
      assert.doesNotMatch(tail.stdout.text(), /\[test\]/, 'real traffic is not marked');
      await sendTestEvent(named.Id);
      await tail.stdout.waitFor(/hook\/tail-named \[test\] /);
      const events = await json.stdout.waitFor(/"kind":"attempt"[^\n]*"Test":true/);
      const test = events
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { kind: string; Test?: boolean; HookId: string })
        .filter((e) => e.Test === true);
      assert.ok(test.every((e) => e.HookId === named.Id));
      assert.ok(test.some((e) => e.kind === 'attempt'));
    } finally {
      tail.interrupt();
      json.interrupt();
      await tail.done;
      await json.done;
    }
  });

  it('listen --print-secret names an unnamed hook by its Id once, a named one by hook/NAME (Id)', async () => {
    const plain = await createHook(d, {
      PathPattern: '/listen-plain',
      Methods: ['GET'],
      Callback: `${receiver.url}/lp`,
    });
    const named = await createHook(d, {
      Name: 'listen-named',
      PathPattern: '/listen-named',
      Methods: ['GET'],
      Callback: `${receiver.url}/ln`,
    });
    const listen = startStreaming(
      'listen',
      ['--hook', plain.Id, '--hook', named.Id, '--forward-to', `${receiver.url}/fw`, '--print-secret'],
      { env: { ...env, NO_COLOR: '1' }, tty: true },
    );
    try {
      const text = await listen.stdout.waitFor(/for hook\/listen-named .* is /);
      const plainLine = text.split('\n').find((l) => l.includes(plain.Id))!;
      assert.match(plainLine, new RegExp(`for ${plain.Id} is `));
      assert.doesNotMatch(plainLine, new RegExp(`\\(${plain.Id}\\)`));
      assert.match(text, new RegExp(`for hook/listen-named \\(${named.Id}\\) is `));
    } finally {
      listen.interrupt();
      await listen.done;
    }
  });
});
