import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { withChoiceHint } from '../../src/hookctl/choice-hint.js';
import { validateEndpoint } from '../../src/notifications/notification-endpoint.js';
import { parsePermissions } from '../../src/users/permissions.js';
import { didYouMean } from '../../src/util/index.js';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { cleanEnv, runInProcess } from '../hookctl/helpers.js';

// Every closed list a user types answers a near miss with the value meant, as the hook's own
// field names always have: events, methods, verification and escape modes, config values,
// permissions, delivery states, hookctl's choices.

interface Problem {
  errors?: { field: string; message: string }[];
}

function refusedMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as { errors?: { message: string }[] }).errors?.map((x) => x.message).join('; ') ?? String(e);
  }
  assert.fail('accepted');
}

describe('didYouMean', () => {
  it('names the closest value, and nothing for an exact or a far one', () => {
    assert.equal(
      didYouMean('hook.disbled', ['hook.disabled', 'delivery.failed']),
      '; did you mean hook.disabled?',
    );
    assert.equal(didYouMean('hook.disabled', ['hook.disabled']), '');
    assert.equal(didYouMean('zzzzzzzz', ['hook.disabled']), '');
    assert.equal(didYouMean(42, ['a']), '');
  });
});

describe('closed lists in the API', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startHookd();
  });
  after(async () => {
    await d?.close();
  });

  it('a notification endpoint: Events: ["hook.disbled"] → did you mean hook.disabled?', async () => {
    const res = await api<Problem>(d.url, d.token, 'POST', '/_hookd/notifications', {
      Url: 'https://ops.example/n',
      Events: ['hook.disbled'],
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.errors?.[0]?.field, 'Events[0]');
    assert.match(res.body.errors?.[0]?.message ?? '', /did you mean hook\.disabled\?/);
  });

  it('hook enums: CallbackMethod, Verification, ContentEscape', async () => {
    const res = await api<Problem>(d.url, d.token, 'POST', '/hooks', {
      PathPattern: '/x',
      Methods: ['GET'],
      Callback: 'http://127.0.0.1:9/h',
      CallbackMethod: 'POTS',
      Verification: 'cloudevent',
      ContentEscape: 'markdwn',
    });
    assert.equal(res.status, 400);
    const by = new Map(res.body.errors?.map((e) => [e.field, e.message]));
    assert.match(by.get('CallbackMethod') ?? '', /did you mean POST\?/);
    assert.match(by.get('Verification') ?? '', /did you mean cloudevents\?/);
    assert.match(by.get('ContentEscape') ?? '', /did you mean markdown\?/);
  });

  it('the delivery log status filter', async () => {
    const hook = await api<{ Id: string }>(d.url, d.token, 'POST', '/hooks', {
      PathPattern: '/x',
      Methods: ['GET'],
      Callback: 'http://127.0.0.1:9/h',
    });
    const res = await api<Problem>(d.url, d.token, 'GET', `/hooks/${hook.body.Id}/deliveries?status=faild`);
    assert.equal(res.status, 400);
    assert.match(res.body.errors?.[0]?.message ?? '', /did you mean failed\?/);
  });
});

describe('closed lists outside the hook API', () => {
  it('a notification endpoint field name', () => {
    assert.match(
      refusedMessage(() => validateEndpoint({ Url: 'https://x.example', Event: ['*'] })),
      /did you mean Events\?/,
    );
  });

  it('a configuration value from a closed list', () => {
    assert.throws(
      () => loadConfig({ env: {}, flags: { logLevel: 'debg' } }),
      (e: Error) => /did you mean debug\?/.test(e.message),
    );
  });

  it('a user permission', () => {
    const r = parsePermissions(['reprot']);
    assert.equal(r.ok, false);
    assert.match(r.ok ? '' : r.errors[0]!, /did you mean report\?/);
  });

  it("hookctl's choices: -o jsn", async () => {
    assert.equal(
      withChoiceHint(
        "error: option '-o, --output <format>' argument 'jsn' is invalid. Allowed choices are table, wide, json.\n",
      ),
      "error: option '-o, --output <format>' argument 'jsn' is invalid. Allowed choices are table, wide, json. Did you mean json?\n",
    );
    const run = await runInProcess(['list', '-o', 'jsn'], {
      env: cleanEnv({ HOOKD_URL: 'http://127.0.0.1:9' }),
      tty: false,
    });
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /Did you mean json\?/);
  });
});
