import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { Webhook } from 'standardwebhooks';
import type { Hook } from '../../src/hook/hook.js';
import { NOTIFICATION_TYPES } from '../../src/notifications/notification-endpoint.js';
import { packageInfo } from '../../src/util/package-info.js';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { addUser, createHook } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { assertBuilt, cleanEnv, hookctl } from '../hookctl/helpers.js';

/** The shipped JSON Schemas (schema/notification-<type>.schema.json): every notification must fit its own. */
const ajv = new Ajv({ allErrors: true });
(addFormats as unknown as (a: Ajv) => void)(ajv);
const validators = new Map<string, ValidateFunction>(
  NOTIFICATION_TYPES.map((t) => [
    t,
    ajv.compile(
      JSON.parse(
        readFileSync(join(packageInfo().root, 'schema', `notification-${t}.schema.json`), 'utf8'),
      ) as object,
    ),
  ]),
);

// Auto-disable and operational notifications through a real hookd (in this process), real
// loopback receivers for the hooks' callbacks and for the notification endpoints, signatures
// checked with the `standardwebhooks` package, hookctl as the real binary.

const REPORT = '/_hookd/report';
const NOTIFICATIONS = '/_hookd/notifications';

interface Call {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver answering every request with `status()` and keeping what it got. */
interface Rcv {
  url: string;
  calls: Call[];
  status: (path: string) => number;
  close(): Promise<void>;
}

async function receiver(status: (path: string) => number = () => 200): Promise<Rcv> {
  const calls: Call[] = [];
  const rcv: Rcv = { url: '', calls, status, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const call = {
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      calls.push(call);
      res.writeHead(rcv.status(call.path), { 'content-type': 'text/plain' }).end('x');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  rcv.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  rcv.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return rcv;
}

interface Notification {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

let d: TestDaemon;
/** Where the notification endpoints are: /alice, /bob, /ops (the admin's). */
let inbox: Rcv;
/** Alice's second notification endpoint, which always answers 500 (its own origin, so its circuit is its own). */
let broken: Rcv;
let brokenId: string;
let aliceToken: string;
let bobToken: string;
/** The hooks Bob made: the only ones he may hear about. */
const bobHooks = new Set<string>();
const secrets = new Map<string, string>();

/** The notifications received on `path`, each checked against its endpoint's secret. */
function received(path: string): Notification[] {
  const secret = secrets.get(path);
  return inbox.calls
    .filter((c) => c.path === path)
    .map((c) => {
      assert.ok(secret, `no secret for ${path}`);
      // Throws unless the signature (Standard Webhooks, v1 HMAC-SHA256) is right.
      const verified = new Webhook(secret).verify(c.body, {
        'webhook-id': c.headers['webhook-id'] as string,
        'webhook-timestamp': c.headers['webhook-timestamp'] as string,
        'webhook-signature': c.headers['webhook-signature'] as string,
      }) as Notification;
      const validate = validators.get(verified.type);
      assert.ok(validate, `unknown notification type ${verified.type}`);
      assert.ok(
        validate(verified),
        `${verified.type} does not fit its schema: ${ajv.errorsText(validate.errors)}`,
      );
      return verified;
    });
}

const ofType = (path: string, type: string) => received(path).filter((n) => n.type === type);

/**
 * Waits until the delivery logs show nothing under way, instead of waiting a fixed time for
 * "nothing more": no delivery of `hookId` pending (so no attempt can disable it again), and none
 * pending to the endpoints at `inboxes` ([token, path] of each), so what they got is all they get.
 */
async function quiet(hookId: string, inboxes: [string, string][]): Promise<void> {
  await until(
    `no delivery of ${hookId} pending`,
    async () =>
      (await api<unknown[]>(d.url, aliceToken, 'GET', `/hooks/${hookId}/deliveries?status=pending`)).body,
    (l) => Array.isArray(l) && l.length === 0,
  );
  for (const [token, path] of inboxes) {
    const endpoints = (await api<{ Id: string; Url: string }[]>(d.url, token, 'GET', NOTIFICATIONS)).body;
    for (const ep of endpoints.filter((e) => e.Url === inbox.url + path)) {
      await until(
        `the notifications to ${path} sent`,
        async () =>
          (await api<{ Status: string }[]>(d.url, token, 'GET', `${NOTIFICATIONS}/${ep.Id}/deliveries`)).body,
        (l) => Array.isArray(l) && l.every((x) => x.Status !== 'pending'),
      );
    }
  }
}

async function addEndpoint(
  token: string,
  path: string,
  extra: Record<string, unknown> = {},
  base = inbox.url,
): Promise<string> {
  const r = await api<{ Id: string; Secret: string; Url: string; Events: string[] }>(
    d.url,
    token,
    'POST',
    NOTIFICATIONS,
    { Url: base + path, ...extra },
  );
  assert.equal(r.status, 201, r.text);
  assert.match(r.body.Id, /^ne_[0-9A-Z]{30}$/);
  assert.match(r.body.Secret, /^whsec_/);
  secrets.set(path, r.body.Secret);
  return r.body.Id;
}

async function report(token: string, paths: string[]): Promise<void> {
  const r = await api(
    d.url,
    token,
    'POST',
    REPORT,
    paths.map((Path) => ({ Method: 'GET', Path, StatusCode: 200, Phase: 'after' })),
  );
  assert.equal(r.status, 202, r.text);
}

before(async () => {
  inbox = await receiver();
  broken = await receiver(() => 500);
  d = await startHookd({
    // Small thresholds: every attempt failed for 300 ms and at least 3 times.
    autoDisableAfterMs: 300,
    autoDisableFailures: 3,
  });
  aliceToken = await addUser(d, 'alice');
  bobToken = await addUser(d, 'bob');
  await addEndpoint(aliceToken, '/alice');
  await addEndpoint(bobToken, '/bob');
  await addEndpoint(d.token, '/ops');
  // Alice's second endpoint always fails: its failures must never come back as notifications.
  brokenId = await addEndpoint(aliceToken, '/broken', {}, broken.url);
});

after(async () => {
  await d?.close();
  await inbox?.close();
  await broken?.close();
});

describe('notification endpoints API', () => {
  it('lists only your own endpoints, never their secret; another user’s is 404; bad input is 400 with the field', async () => {
    const mine = await api<{ Id: string; Url: string; Secret?: string }[]>(
      d.url,
      aliceToken,
      'GET',
      NOTIFICATIONS,
    );
    assert.equal(mine.status, 200);
    assert.deepEqual(mine.body.map((e) => new URL(e.Url).pathname).sort(), ['/alice', '/broken']);
    assert.ok(mine.body.every((e) => e.Secret === undefined));
    const id = mine.body[0]!.Id;
    assert.equal((await api(d.url, aliceToken, 'GET', `${NOTIFICATIONS}/${id}`)).status, 200);
    assert.equal((await api(d.url, bobToken, 'GET', `${NOTIFICATIONS}/${id}`)).status, 404);
    assert.equal((await api(d.url, bobToken, 'DELETE', `${NOTIFICATIONS}/${id}`)).status, 404);
    const bad = await api<{ errors: { field: string }[] }>(d.url, aliceToken, 'POST', NOTIFICATIONS, {
      Url: 'ftp://x',
      Events: ['hook.exploded'],
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.errors.map((e) => e.field).sort(), ['Events[0]', 'Url']);
    assert.equal((await api(d.url, undefined, 'GET', NOTIFICATIONS)).status, 401);
  });
});

describe('auto-disable', () => {
  let failing: Rcv;
  let hook: Hook;

  before(async () => {
    failing = await receiver(() => 500);
  });
  after(async () => failing?.close());

  it('a hook whose every attempt fails past the threshold is disabled, and its owner’s endpoint gets hook.disabled once, signed', async () => {
    hook = await createHook(
      d,
      {
        PathPattern: '/auto/disable',
        Methods: ['GET'],
        Callback: `${failing.url}/auto`,
        RetrySchedule: [0, 0.15, 0.15, 0.15, 0.15, 0.15],
      },
      { token: aliceToken },
    );
    await report(aliceToken, ['/auto/disable']);
    const got = await until(
      'the hook disabled',
      async () => (await api<Hook>(d.url, aliceToken, 'GET', `/hooks/${hook.Id}`)).body,
      (h) => h.State === 'disabled',
    );
    assert.match(got.DisabledReason ?? '', /every attempt failed/);
    assert.ok(got.DisabledAt && Date.parse(got.DisabledAt) > 0, 'DisabledAt is a time');
    assert.ok(failing.calls.length >= 3, `${failing.calls.length} attempts before disabling`);

    const [n] = await until(
      'hook.disabled at /alice',
      () => ofType('/alice', 'hook.disabled'),
      (l) => l.length >= 1,
    );
    assert.equal(n!.data.HookId, hook.Id);
    assert.equal(n!.data.Owner, 'alice');
    assert.equal(n!.data.Cause, 'failing');
    assert.equal(n!.data.State, 'disabled');
    assert.equal(n!.data.DisabledReason, got.DisabledReason);
    assert.ok((n!.data.FailedAttempts as number) >= 3);
    // The operator hears of it too; the other user does not.
    await until(
      'hook.disabled at /ops',
      () => ofType('/ops', 'hook.disabled'),
      (l) => l.length >= 1,
    );
    // Once: the attempts still under way when it was disabled do not disable it again.
    const attempts = failing.calls.length;
    await quiet(hook.Id, [
      [aliceToken, '/alice'],
      [bobToken, '/bob'],
    ]);
    assert.equal(ofType('/alice', 'hook.disabled').length, 1, 'hook.disabled exactly once');
    assert.ok(failing.calls.length <= attempts + 1, 'nothing more is sent to a disabled hook');
    assert.equal(received('/bob').length, 0, 'bob hears nothing of alice’s hook');

    const metrics = await (await fetch(`${d.opsUrl}/metrics`)).text();
    assert.match(metrics, /hookd_hooks_disabled_total\{cause="failing"\} 1/);
    assert.match(metrics, /^hookd_hooks_disabled 1$/m);
  });

  it('hookctl shows the state and reason; POST /hooks/{id}/enable and hookctl enable re-enable it', async () => {
    assertBuilt();
    const env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: aliceToken });
    const got = await hookctl(['get', hook.Id], { env });
    assert.equal(got.code, 0, got.stderr);
    const shown = JSON.parse(got.stdout) as Hook;
    assert.equal(shown.State, 'disabled');
    assert.match(shown.DisabledReason ?? '', /every attempt failed/);
    const list = await hookctl(['list', '-o', 'wide'], { env });
    assert.match(list.stdout, new RegExp(`${hook.Id}.*disabled.*every attempt failed`));

    // The API.
    const enabled = await api<Hook>(d.url, aliceToken, 'POST', `/hooks/${hook.Id}/enable`);
    assert.equal(enabled.status, 200, enabled.text);
    assert.equal(enabled.body.State, 'active');
    assert.equal(enabled.body.DisabledReason, undefined);
    assert.equal(enabled.body.DisabledAt, undefined);
    assert.equal((await api(d.url, bobToken, 'POST', `/hooks/${hook.Id}/enable`)).status, 404);

    // Disabled again (pointed at another failing receiver: the first one's circuit is open now, and
    // attempts not sent do not count), then hookctl hooks enable and the shortcut hookctl enable.
    const failing2 = await receiver(() => 500);
    after(() => failing2.close());
    const put = await api<Hook>(d.url, aliceToken, 'PUT', `/hooks/${hook.Id}`, {
      PathPattern: '/auto/disable',
      Methods: ['GET'],
      Callback: `${failing2.url}/auto`,
      RetrySchedule: [0, 0.15, 0.15, 0.15, 0.15, 0.15],
    });
    assert.equal(put.status, 200, put.text);
    await report(aliceToken, ['/auto/disable']);
    await until(
      'disabled again',
      async () => (await api<Hook>(d.url, aliceToken, 'GET', `/hooks/${hook.Id}`)).body.State,
      (s) => s === 'disabled',
    );
    await until(
      'a second hook.disabled',
      () => ofType('/alice', 'hook.disabled'),
      (l) => l.length === 2,
    );
    const r1 = await hookctl(['hooks', 'enable', hook.Id], { env });
    assert.equal(r1.code, 0, r1.stderr);
    assert.match(r1.stderr, new RegExp(`enabled ${hook.Id}`));
    assert.equal((await api<Hook>(d.url, aliceToken, 'GET', `/hooks/${hook.Id}`)).body.State, 'active');
    const r2 = await hookctl(['enable', hook.Id, '-o', 'json'], { env });
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal((JSON.parse(r2.stdout) as Hook).State, 'active');
    const r3 = await hookctl(['enable', 'hk_nope'], { env });
    assert.equal(r3.code, 1);
    await api(d.url, aliceToken, 'DELETE', `/hooks/${hook.Id}`);
  });

  it('410 Gone still disables at once, with its reason, and notifies once', async () => {
    const gone = await receiver(() => 410);
    try {
      const h = await createHook(
        d,
        { PathPattern: '/gone/now', Methods: ['GET'], Callback: `${gone.url}/g` },
        { token: aliceToken },
      );
      await report(aliceToken, ['/gone/now']);
      const got = await until(
        'disabled by 410',
        async () => (await api<Hook>(d.url, aliceToken, 'GET', `/hooks/${h.Id}`)).body,
        (v) => v.State === 'disabled',
      );
      assert.match(got.DisabledReason ?? '', /410 Gone/);
      const n = await until(
        'hook.disabled (gone)',
        () => ofType('/alice', 'hook.disabled').filter((x) => x.data.HookId === h.Id),
        (l) => l.length >= 1,
      );
      assert.equal(n[0]!.data.Cause, 'gone');
      await quiet(h.Id, [[aliceToken, '/alice']]);
      assert.equal(ofType('/alice', 'hook.disabled').filter((x) => x.data.HookId === h.Id).length, 1);
      // PUT re-enables, as before.
      const put = await api<Hook>(d.url, aliceToken, 'PUT', `/hooks/${h.Id}`, {
        PathPattern: '/gone/now',
        Methods: ['GET'],
        Callback: `${gone.url}/g2`,
      });
      assert.equal(put.body.State, 'active');
      assert.equal(put.body.DisabledReason, undefined);
      await api(d.url, aliceToken, 'DELETE', `/hooks/${h.Id}`);
    } finally {
      await gone.close();
    }
  });
});

describe('delivery.failed and the breaker events', () => {
  it('a dead letter produces delivery.failed for its owner and the operator, not for another user', async () => {
    const dead = await receiver(() => 503);
    try {
      const h = await createHook(
        d,
        {
          PathPattern: '/dead/letter',
          Methods: ['GET'],
          Callback: `${dead.url}/d`,
          RetrySchedule: [0, 0.05],
        },
        { token: aliceToken },
      );
      await report(aliceToken, ['/dead/letter']);
      const [n] = await until(
        'delivery.failed',
        () => ofType('/alice', 'delivery.failed').filter((x) => x.data.HookId === h.Id),
        (l) => l.length >= 1,
      );
      assert.match(n!.data.DeliveryId as string, /^msg_/);
      assert.equal(n!.data.Attempts, 2);
      assert.equal(n!.data.LastStatusCode, 503);
      assert.equal(n!.data.Url, `${dead.url}/d`);
      await until(
        'delivery.failed at /ops',
        () => ofType('/ops', 'delivery.failed').filter((x) => x.data.HookId === h.Id),
        (l) => l.length >= 1,
      );
      // A marker: Bob's own failure, made after Alice's, reaches his endpoint; by then every
      // notification sent to it is there, and none is about Alice's hook.
      const mine = await createHook(
        d,
        { PathPattern: '/dead/bob', Methods: ['GET'], Callback: `${dead.url}/b`, RetrySchedule: [0] },
        { token: bobToken },
      );
      bobHooks.add(mine.Id);
      await report(bobToken, ['/dead/bob']);
      await until(
        "delivery.failed of Bob's hook at /bob",
        () => ofType('/bob', 'delivery.failed').filter((x) => x.data.HookId === mine.Id),
        (l) => l.length >= 1,
      );
      await quiet(h.Id, [[bobToken, '/bob']]);
      assert.deepEqual(
        received('/bob').filter((x) => x.data.HookId === h.Id),
        [],
        "Alice's failure is not told to Bob",
      );
      // Still active: 2 failures are under the auto-disable count.
      assert.equal((await api<Hook>(d.url, aliceToken, 'GET', `/hooks/${h.Id}`)).body.State, 'active');
      await api(d.url, aliceToken, 'DELETE', `/hooks/${h.Id}`);
      await api(d.url, bobToken, 'DELETE', `/hooks/${mine.Id}`);
    } finally {
      await dead.close();
    }
  });

  it('5 failures at one destination open its circuit: endpoint.breaker_opened, then breaker_closed after a good probe', {
    timeout: 90_000,
  }, async () => {
    let up = false;
    const flaky = await receiver(() => (up ? 200 : 500));
    try {
      // Five hooks on one endpoint (callback URL) with one failure each: the endpoint fails 5
      // times, no hook reaches the auto-disable count. Their retry comes after the breaker's 30 s
      // cool-down: the probe.
      const hooks: Hook[] = [];
      for (let i = 0; i < 5; i++) {
        hooks.push(
          await createHook(
            d,
            {
              PathPattern: `/flaky/${i}`,
              Methods: ['GET'],
              Callback: `${flaky.url}/f`,
              RetrySchedule: [0, 35],
            },
            { token: aliceToken },
          ),
        );
      }
      await report(
        aliceToken,
        hooks.map((_, i) => `/flaky/${i}`),
      );
      const about = (path: string, type: string) =>
        ofType(path, type).filter((n) => n.data.Endpoint === `${flaky.url}/f`);
      const [opened] = await until(
        'endpoint.breaker_opened',
        () => about('/alice', 'endpoint.breaker_opened'),
        (l) => l.length >= 1,
      );
      assert.equal(opened!.data.Endpoint, `${flaky.url}/f`);
      assert.equal(opened!.data.State, 'open');
      assert.deepEqual((opened!.data.HookIds as string[]).sort(), hooks.map((h) => h.Id).sort());
      assert.ok(Date.parse(opened!.data.ProbeAt as string) > Date.now());
      await until(
        'breaker_opened at /ops',
        () => about('/ops', 'endpoint.breaker_opened'),
        (l) => l.length >= 1,
      );
      up = true;
      const [closed] = await until(
        'endpoint.breaker_closed',
        () => about('/alice', 'endpoint.breaker_closed'),
        (l) => l.length >= 1,
        60_000,
      );
      assert.equal(closed!.data.Endpoint, `${flaky.url}/f`);
      assert.equal(closed!.data.State, 'closed');
      assert.equal(about('/alice', 'endpoint.breaker_opened').length, 1);
      for (const h of hooks) await api(d.url, aliceToken, 'DELETE', `/hooks/${h.Id}`);
    } finally {
      await flaky.close();
    }
  });

  it('no loop: the failing /broken endpoint got every event too, and nothing ever told anyone about it', async () => {
    assert.ok(broken.calls.length >= 3, `${broken.calls.length} notifications tried at /broken`);
    const everything = [...received('/alice'), ...received('/ops')];
    assert.ok(everything.length > 0);
    for (const n of everything) {
      const text = JSON.stringify(n.data);
      assert.ok(!/"HookId":"ne_/.test(text), `a notification about a notification endpoint: ${text}`);
      assert.ok(!text.includes(broken.url), `a notification naming /broken: ${text}`);
      assert.ok(
        !String(n.data.Endpoint ?? '').startsWith(inbox.url),
        'no breaker event for the notification receivers',
      );
    }
    assert.deepEqual(
      received('/bob').filter((n) => !bobHooks.has(String(n.data.HookId))),
      [],
      'bob got nothing but news of his own hook',
    );
    // The broken endpoint's deliveries are in its log, for its owner only.
    const log = await api<
      { HookId: string; Status: string; LastStatusCode: number | null; Trigger: Record<string, unknown> }[]
    >(d.url, aliceToken, 'GET', `${NOTIFICATIONS}/${brokenId}/deliveries`);
    assert.equal(log.status, 200, log.text);
    assert.ok(log.body.length >= 3);
    assert.ok(log.body.every((x) => x.HookId === brokenId && x.Status !== 'succeeded'));
    // A notification is no HTTP request: its trigger names the event, with no Method to mistake.
    for (const x of log.body) {
      assert.equal(x.Trigger.Kind, 'notification', JSON.stringify(x.Trigger));
      assert.ok(
        (NOTIFICATION_TYPES as readonly unknown[]).includes(x.Trigger.Event),
        JSON.stringify(x.Trigger),
      );
      assert.deepEqual(Object.keys(x.Trigger).sort(), ['Event', 'Kind']);
    }
    assert.equal((await api(d.url, bobToken, 'GET', `${NOTIFICATIONS}/${brokenId}/deliveries`)).status, 404);
  });
});

describe('hookctl notifications', () => {
  it('add (secret shown once), list, remove', async () => {
    assertBuilt();
    const env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: bobToken });
    const add = await hookctl(
      [
        'notifications',
        'add',
        `${inbox.url}/bob2`,
        '--events',
        'hook.disabled,delivery.failed',
        '-o',
        'json',
      ],
      { env },
    );
    assert.equal(add.code, 0, add.stderr);
    const e = JSON.parse(add.stdout) as { Id: string; Secret: string; Events: string[] };
    assert.match(e.Secret, /^whsec_/);
    assert.deepEqual(e.Events, ['hook.disabled', 'delivery.failed']);
    const list = await hookctl(['notifications', 'list'], { env });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`${e.Id}\t${inbox.url}/bob2\thook.disabled,delivery.failed`));
    assert.ok(!list.stdout.includes(e.Secret), 'the secret is not listed');
    const bad = await hookctl(['notifications', 'add', `${inbox.url}/x`, '--events', 'nope'], { env });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /Events\[0\]/);
    const rm = await hookctl(['notifications', 'remove', e.Id], { env });
    assert.equal(rm.code, 0, rm.stderr);
    assert.match(rm.stderr, new RegExp(`removed ${e.Id}`));
    const again = await hookctl(['notifications', 'rm', e.Id], { env });
    assert.equal(again.code, 1);
    const after = await hookctl(['notifications', 'list', '-o', 'json'], { env });
    assert.ok(!(JSON.parse(after.stdout) as { Id: string }[]).some((x) => x.Id === e.Id));
  });
});
