import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { Hook } from '../../src/hook/hook.js';
import { type ApiResponse, api, spawnHookd, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { addUser, createHook, startUpstream, type Upstream } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { assertBuilt, cleanEnv, hookctl } from '../hookctl/helpers.js';

// Deliveries through a real hookd: hooks fire from the proxy or from POST /report, callbacks go
// to a real receiver, and the delivery log, redelivery, signing and 410 handling are read back
// through the API and hookctl (docs/API.md "Deliveries").

/** One callback as the receiver saw it. */
interface Call {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** `performance.now()` when it arrived. */
  at: number;
}

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** A receiver whose answers a test scripts per call (500 then 200, 410, 302…). */
interface ScriptedReceiver {
  url: string;
  calls: Call[];
  /** Decides each answer; `n` counts calls to the same path, from 1. */
  answer: (call: Call, n: number) => Answer;
  /** The calls to `path`, once there are at least `n` of them. */
  waitFor(path: string, n: number, timeoutMs?: number): Promise<Call[]>;
  on(path: string): Call[];
  close(): Promise<void>;
}

async function scriptedReceiver(): Promise<ScriptedReceiver> {
  const calls: Call[] = [];
  const perPath = new Map<string, number>();
  const server = createServer((req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const call: Call = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at,
      };
      calls.push(call);
      const n = (perPath.get(call.path) ?? 0) + 1;
      perPath.set(call.path, n);
      const a = receiver.answer(call, n);
      res.writeHead(a.status, { 'content-type': 'text/plain', ...a.headers }).end(a.body ?? 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const on = (path: string) => calls.filter((c) => c.path === path);
  const receiver: ScriptedReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    answer: () => ({ status: 200 }),
    on,
    waitFor: (path, n, timeoutMs = 5000) =>
      until(
        `${n} callback(s) on ${path}`,
        () => on(path),
        (l) => l.length >= n,
        timeoutMs,
      ),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

interface DeliveryView {
  Id: string;
  HookId: string;
  Status: 'pending' | 'succeeded' | 'failed';
  Attempts: number;
  Created: string;
  NextAttempt: string | null;
  LastStatusCode: number | null;
  LastError: string | null;
  Trigger: { Method: string; Path: string; StatusCode: number | null; User: string | null };
  Request: { Method: string; Url: string; ContentType: string | null; Body: string | null };
  AttemptLog?: {
    Attempt: number;
    Time: string;
    StatusCode: number | null;
    LatencyMs: number;
    Error: string | null;
    ResponseBody: string | null;
  }[];
}

const MSG_ID = /^msg_[0-9A-Z]{26}$/;

let upstream: Upstream;
let rcv: ScriptedReceiver;
let d: TestDaemon;

before(async () => {
  upstream = await startUpstream();
  rcv = await scriptedReceiver();
  d = await startHookd({ upstream: upstream.url });
});

after(async () => {
  await d?.close();
  await rcv?.close();
  await upstream?.close();
});

const report = (paths: string[], statusCode = 200, token = d.token) =>
  api<{ accepted: number; fired: number }>(
    d.url,
    token,
    'POST',
    '/_hookd/report',
    paths.map((Path) => ({ Method: 'GET', Path, StatusCode: statusCode, Phase: 'after' })),
  );

const delivery = (id: string, token = d.token) =>
  api<DeliveryView>(d.url, token, 'GET', `/_hookd/deliveries/${id}`);

const deliveries = (hookId: string, query = '') =>
  api<DeliveryView[]>(d.url, d.token, 'GET', `/hooks/${hookId}/deliveries${query}`);

/** A hook on `PathPattern` whose callbacks go to the receiver's `cbPath`. */
function hookOn(pattern: string, cbPath: string, extra: Record<string, unknown> = {}): Promise<Hook> {
  return createHook(d, { PathPattern: pattern, Methods: ['GET'], Callback: rcv.url + cbPath, ...extra });
}

async function deleteHook(id: string): Promise<void> {
  assert.equal((await api(d.url, d.token, 'DELETE', `/hooks/${id}`)).status, 204);
}

describe('retries through the daemon', () => {
  it('a receiver answering 500 then 200 gets the same webhook-id twice, 5 s apart (±10%); the delivery ends succeeded after 2 attempts', async () => {
    rcv.answer = (c, n) =>
      c.path === '/retry' && n === 1 ? { status: 500, body: 'try again later' } : { status: 200 };
    const hook = await hookOn('/repositories/*/timeseries/(*)', '/retry');
    try {
      const res = await fetch(`${d.url}/repositories/r1/timeseries/ts1`);
      assert.equal(res.status, 200);
      await res.text();

      const [first, second] = await rcv.waitFor('/retry', 2, 9000);
      const id = first!.headers['webhook-id'] as string;
      assert.match(id, MSG_ID);
      assert.equal(second!.headers['webhook-id'], id, 'a retry is the same message');
      assert.equal(second!.body, first!.body, 'and carries the same body');
      const gap = second!.at - first!.at;
      assert.ok(gap >= 4400, `the 2nd attempt came ${gap} ms after the 1st: the schedule says 5 s ±10%`);

      const got = await until(
        'the delivery',
        async () => (await delivery(id)).body,
        (v) => v.Status === 'succeeded',
      );
      assert.equal(got.Id, id);
      assert.equal(got.HookId, hook.Id);
      assert.equal(got.Attempts, 2);
      assert.equal(got.LastStatusCode, 200);
      assert.equal(got.NextAttempt, null);
      assert.deepEqual(got.Trigger, {
        Kind: 'request',
        Method: 'GET',
        Path: '/repositories/r1/timeseries/ts1',
        StatusCode: 200,
        User: null,
      });
      assert.equal(got.Request.Method, 'POST');
      assert.equal(got.Request.Url, `${rcv.url}/retry`);
      assert.equal(got.Request.ContentType, 'application/json');
      assert.deepEqual(
        got.AttemptLog!.map((a) => [a.Attempt, a.StatusCode]),
        [
          [1, 500],
          [2, 200],
        ],
      );
      assert.equal(got.AttemptLog![0]!.ResponseBody, 'try again later');
      const step = Date.parse(got.AttemptLog![1]!.Time) - Date.parse(got.AttemptLog![0]!.Time);
      // A lower bound only (5 s less the 10% jitter): how late a loaded machine starts it is not the rule.
      assert.ok(step >= 4500, `attempt 2 started ${step} ms after attempt 1 (5 s -10% at the earliest)`);
    } finally {
      await deleteHook(hook.Id);
    }
  });

  it('a 302 is not followed: the Location is never requested and the delivery stays pending for a retry', async () => {
    rcv.answer = (c) =>
      c.path === '/moved' ? { status: 302, headers: { location: `${rcv.url}/elsewhere` } } : { status: 200 };
    const hook = await hookOn('/moved', '/moved');
    try {
      assert.equal((await report(['/moved/x'])).status, 202);
      const [call] = await rcv.waitFor('/moved', 1);
      const id = call!.headers['webhook-id'] as string;
      const got = await until(
        'the delivery',
        async () => (await delivery(id)).body,
        (v) => v.Attempts === 1,
      );
      assert.equal(got.Status, 'pending');
      assert.equal(got.LastStatusCode, 302);
      assert.notEqual(got.NextAttempt, null);
      // The attempt is recorded with the 302 itself: a followed redirect would have requested the
      // target before the attempt ended, so it would be here by now.
      assert.deepEqual(rcv.on('/elsewhere'), [], 'the redirect target was requested');
    } finally {
      await deleteHook(hook.Id);
    }
  });
});

describe('the delivery log', () => {
  it('GET /hooks/{id}/deliveries lists newest first, filters by status and time, and pages with Link', async () => {
    rcv.answer = (c) => (c.body.includes('/bad/') ? { status: 500 } : { status: 200 });
    const hook = await hookOn('/log', '/log');
    try {
      const paths = ['/log/ok/1', '/log/bad/2', '/log/ok/3', '/log/bad/4', '/log/ok/5'];
      const fired = await report(paths);
      assert.deepEqual(fired.body, { accepted: 5, fired: 5 });
      await rcv.waitFor('/log', 5);
      const all = await until(
        'the log',
        async () => (await deliveries(hook.Id)).body,
        (v) => v.length === 5 && v.every((x) => x.Attempts === 1),
      );
      assert.deepEqual(
        all.map((x) => x.Trigger.Path),
        [...paths].reverse(),
        'newest first',
      );
      assert.deepEqual(
        all.map((x) => x.Id),
        all
          .map((x) => x.Id)
          .sort()
          .reverse(),
      );

      const ok = (await deliveries(hook.Id, '?status=succeeded')).body;
      assert.deepEqual(
        ok.map((x) => x.Trigger.Path),
        ['/log/ok/5', '/log/ok/3', '/log/ok/1'],
      );
      const pending = (await deliveries(hook.Id, '?status=pending')).body;
      assert.deepEqual(
        pending.map((x) => x.Trigger.Path),
        ['/log/bad/4', '/log/bad/2'],
      );
      for (const p of pending) {
        assert.equal(p.LastStatusCode, 500);
        assert.notEqual(p.NextAttempt, null);
      }
      assert.deepEqual((await deliveries(hook.Id, '?status=failed')).body, []);

      // Paging: follow Link until it stops; the pages add up to the whole list.
      const seen: string[] = [];
      let next: string | undefined = `/hooks/${hook.Id}/deliveries?limit=2`;
      const sizes: number[] = [];
      while (next) {
        const page: ApiResponse<DeliveryView[]> = await api<DeliveryView[]>(d.url, d.token, 'GET', next);
        assert.equal(page.status, 200);
        sizes.push(page.body.length);
        seen.push(...page.body.map((x) => x.Id));
        const link = page.headers.get('link');
        next = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined;
        if (link) assert.ok(next, `Link header: ${link}`);
      }
      assert.deepEqual(sizes, [2, 2, 1]);
      assert.deepEqual(
        seen,
        all.map((x) => x.Id),
      );

      // The filter survives paging.
      const first = await deliveries(hook.Id, '?status=succeeded&limit=2');
      assert.equal(first.body.length, 2);
      const link = first.headers.get('link')!;
      assert.match(link, /status=succeeded/);
      const rest = await api<DeliveryView[]>(d.url, d.token, 'GET', /<([^>]+)>/.exec(link)![1]!);
      assert.deepEqual(
        rest.body.map((x) => x.Trigger.Path),
        ['/log/ok/1'],
      );
      assert.equal(rest.headers.get('link'), null);

      const created = Date.parse(all.at(-1)!.Created);
      const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
      assert.equal((await deliveries(hook.Id, `?since=${iso(created - 60_000)}`)).body.length, 5);
      assert.deepEqual((await deliveries(hook.Id, `?since=${iso(Date.now() + 60_000)}`)).body, []);
      assert.deepEqual((await deliveries(hook.Id, `?until=${iso(created - 60_000)}`)).body, []);

      for (const bad of ['?status=bogus', '?limit=0', '?limit=1001', '?after=nope', '?since=yesterday']) {
        const r = await deliveries(hook.Id, bad);
        assert.equal(r.status, 400, `${bad}: ${r.text}`);
        assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
      }
      assert.equal((await deliveries('hk_nosuchhook')).status, 404);
    } finally {
      await deleteHook(hook.Id);
    }
  });
});

describe('redelivery', () => {
  it('POST /deliveries/{id}/redeliver sends the delivery again with the same webhook-id', async () => {
    rcv.answer = () => ({ status: 200 });
    const hook = await hookOn('/again', '/again');
    try {
      await report(['/again/1']);
      const [call] = await rcv.waitFor('/again', 1);
      const id = call!.headers['webhook-id'] as string;
      await until(
        'the delivery',
        async () => (await delivery(id)).body,
        (v) => v.Status === 'succeeded',
      );

      const r = await api<DeliveryView>(d.url, d.token, 'POST', `/_hookd/deliveries/${id}/redeliver`);
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body.Id, id);
      const [, again] = await rcv.waitFor('/again', 2);
      assert.equal(again!.headers['webhook-id'], id);
      assert.equal(again!.body, call!.body);
      const got = await until(
        'the delivery',
        async () => (await delivery(id)).body,
        (v) => v.Status === 'succeeded' && v.Attempts === 2,
      );
      assert.equal(got.AttemptLog!.length, 2);

      assert.equal(
        (await api(d.url, d.token, 'POST', '/_hookd/deliveries/msg_00000000000000000000000000/redeliver'))
          .status,
        404,
      );
      assert.equal((await api(d.url, d.token, 'POST', '/_hookd/deliveries/not-an-id/redeliver')).status, 404);
    } finally {
      await deleteHook(hook.Id);
    }
  });

  it('POST /hooks/{id}/redeliver queues every delivery by default, or those matching the filter', async () => {
    rcv.answer = () => ({ status: 200 });
    const hook = await hookOn('/bulk', '/bulk');
    try {
      await report(['/bulk/1', '/bulk/2', '/bulk/3']);
      const firstRound = await rcv.waitFor('/bulk', 3);
      const ids = firstRound.map((c) => c.headers['webhook-id'] as string).sort();
      await until(
        'the log',
        async () => (await deliveries(hook.Id, '?status=succeeded')).body,
        (v) => v.length === 3,
      );

      const none = await api(d.url, d.token, 'POST', `/hooks/${hook.Id}/redeliver`, { status: 'failed' });
      assert.equal(none.status, 202, none.text);
      assert.deepEqual(none.body, { queued: 0, pending: 0, failed: 0 }, 'nothing failed');
      const dry = await api(d.url, d.token, 'POST', `/hooks/${hook.Id}/redeliver`, { dryRun: true });
      assert.deepEqual(
        dry.body,
        { queued: 3, pending: 0, failed: 0, dryRun: true },
        'no filter: all of them',
      );

      const some = await api(d.url, d.token, 'POST', `/hooks/${hook.Id}/redeliver`, {});
      assert.equal(some.status, 202, some.text);
      assert.deepEqual(some.body, { queued: 3, pending: 0, failed: 0 });
      const both = await rcv.waitFor('/bulk', 6);
      assert.deepEqual(
        both
          .slice(3)
          .map((c) => c.headers['webhook-id'] as string)
          .sort(),
        ids,
      );

      const future = new Date(Date.now() + 60_000).toISOString();
      const late = await api(d.url, d.token, 'POST', `/hooks/${hook.Id}/redeliver`, {
        status: 'succeeded',
        since: future,
      });
      assert.deepEqual(late.body, { queued: 0, pending: 0, failed: 0 });

      const bad = await api(d.url, d.token, 'POST', `/hooks/${hook.Id}/redeliver`, { state: 'failed' });
      assert.equal(bad.status, 400);
      assert.match(bad.text, /state/);
    } finally {
      await deleteHook(hook.Id);
    }
  });
});

describe('410 Gone', () => {
  it('disables the hook (GET /hooks/{id} and hookctl list show it); nothing more is sent until a PUT enables it', async () => {
    assertBuilt();
    let gone = true;
    rcv.answer = (c, n) =>
      c.path !== '/gone' || !gone ? { status: 200 } : n === 1 ? { status: 500 } : { status: 410 };
    const body = { PathPattern: '/gone', Methods: ['GET'], Callback: `${rcv.url}/gone` };
    const hook = await createHook(d, body);
    try {
      // A delivery waiting for its retry (500), then one that meets 410.
      await report(['/gone/0']);
      const [waiting] = await rcv.waitFor('/gone', 1);
      const waitingId = waiting!.headers['webhook-id'] as string;
      await until(
        'the pending delivery',
        async () => (await delivery(waitingId)).body,
        (v) => v.Attempts === 1,
      );
      await report(['/gone/1']);
      const [, call] = await rcv.waitFor('/gone', 2);
      const id = call!.headers['webhook-id'] as string;
      const disabled = await until(
        'the hook',
        async () => (await api<Hook>(d.url, d.token, 'GET', `/hooks/${hook.Id}`)).body,
        (h) => h.State === 'disabled',
      );
      assert.equal(disabled.State, 'disabled');
      const dlv = (await delivery(id)).body;
      assert.equal(dlv.Status, 'failed');
      assert.equal(dlv.LastStatusCode, 410);
      // The 410 ended the other pending delivery too, without another attempt.
      const ended = (await delivery(waitingId)).body;
      assert.equal(ended.Status, 'failed');
      assert.equal(ended.Attempts, 1);
      assert.match(ended.LastError ?? '', /disabled/);
      assert.deepEqual(
        (await deliveries(hook.Id, '?status=failed')).body.map((x) => x.Id),
        [id, waitingId],
      );

      const env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
      const listed = await hookctl(['list', '-o', 'json'], { env });
      assert.equal(listed.code, 0, listed.stderr);
      const row = (JSON.parse(listed.stdout) as Hook[]).find((h) => h.Id === hook.Id);
      assert.equal(row?.State, 'disabled');

      // Disabled: a new trigger is not sent, and a redelivery is refused.
      // The answer counts the deliveries the report made, once recorded: none, so none can be sent.
      const again = await report(['/gone/2']);
      assert.equal(again.body.fired, 0, 'a disabled hook fired');
      assert.equal((await deliveries(hook.Id)).body.length, 2, 'a disabled hook recorded a delivery');
      assert.equal(rcv.on('/gone').length, 2, 'a disabled hook was delivered');
      const refused = await api(d.url, d.token, 'POST', `/_hookd/deliveries/${id}/redeliver`);
      assert.equal(refused.status, 409, refused.text);

      gone = false;
      const put = await api<Hook>(d.url, d.token, 'PUT', `/hooks/${hook.Id}`, body);
      assert.equal(put.status, 200, put.text);
      assert.equal(put.body.State, 'active');
      assert.equal((await api<Hook>(d.url, d.token, 'GET', `/hooks/${hook.Id}`)).body.State, 'active');
      await report(['/gone/3']);
      const calls = await rcv.waitFor('/gone', 3);
      assert.match(calls[2]!.body, /\/gone\/3/);
    } finally {
      await deleteHook(hook.Id);
    }
  });
});

describe('signatures', () => {
  it('verify with the standardwebhooks package and GET /hooks/{id}/secret; after a rotation both secrets verify', async () => {
    rcv.answer = () => ({ status: 200 });
    const hook = await hookOn('/signed', '/signed');
    try {
      const s = await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${hook.Id}/secret`);
      assert.equal(s.status, 200);
      const oldSecret = s.body.Secret;
      assert.match(oldSecret, /^whsec_[A-Za-z0-9+/]+=*$/);
      assert.equal(
        (await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${hook.Id}/secret`)).body.Secret,
        oldSecret,
        'the secret is stable',
      );

      await report(['/signed/1']);
      const [first] = await rcv.waitFor('/signed', 1);
      const headers = (c: Call) => ({
        'webhook-id': c.headers['webhook-id'] as string,
        'webhook-timestamp': c.headers['webhook-timestamp'] as string,
        'webhook-signature': c.headers['webhook-signature'] as string,
      });
      const payload = new Webhook(oldSecret).verify(first!.body, headers(first!)) as { path?: string };
      assert.equal(typeof payload, 'object', 'the default body is the JSON event document');
      assert.match(first!.body, /\/signed\/1/);
      const stranger = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
      assert.throws(() => new Webhook(stranger).verify(first!.body, headers(first!)));
      assert.throws(
        () => new Webhook(oldSecret).verify(`${first!.body} `, headers(first!)),
        'a changed body',
      );

      const rotated = await api<{ Secret: string; PreviousValidUntil: string }>(
        d.url,
        d.token,
        'POST',
        `/hooks/${hook.Id}/secret/rotate`,
      );
      assert.equal(rotated.status, 200, rotated.text);
      const newSecret = rotated.body.Secret;
      assert.notEqual(newSecret, oldSecret);
      const grace = Date.parse(rotated.body.PreviousValidUntil) - Date.now();
      assert.ok(grace > 60 * 60_000, `the old secret stays valid for a while (${grace} ms)`);
      assert.equal(
        (await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${hook.Id}/secret`)).body.Secret,
        newSecret,
      );

      await report(['/signed/2']);
      const [, second] = await rcv.waitFor('/signed', 2);
      assert.equal((second!.headers['webhook-signature'] as string).split(' ').length, 2);
      new Webhook(newSecret).verify(second!.body, headers(second!));
      new Webhook(oldSecret).verify(second!.body, headers(second!));
      assert.throws(() => new Webhook(stranger).verify(second!.body, headers(second!)));
      assert.throws(
        () => new Webhook(newSecret).verify(first!.body, headers(first!)),
        'the new secret did not sign what was sent before it existed',
      );
    } finally {
      await deleteHook(hook.Id);
    }
  });
});

describe("another user's deliveries", () => {
  it('are 404 for every delivery route, like unknown ones, and reveal no hook Id', async () => {
    rcv.answer = () => ({ status: 200 });
    const bob = await addUser(d, `bob${Date.now()}`);
    const hook = await hookOn('/private', '/private');
    try {
      await report(['/private/1']);
      const [call] = await rcv.waitFor('/private', 1);
      const id = call!.headers['webhook-id'] as string;
      const secret = (await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${hook.Id}/secret`)).body
        .Secret;

      const tries: [string, string][] = [
        ['GET', `/hooks/${hook.Id}/deliveries`],
        ['GET', `/_hookd/deliveries/${id}`],
        ['POST', `/_hookd/deliveries/${id}/redeliver`],
        ['POST', `/hooks/${hook.Id}/redeliver`],
        ['GET', `/hooks/${hook.Id}/secret`],
        ['POST', `/hooks/${hook.Id}/secret/rotate`],
      ];
      for (const [method, path] of tries) {
        const r = await api(d.url, bob, method, path);
        assert.equal(r.status, 404, `${method} ${path} as bob: ${r.status} ${r.text}`);
        assert.doesNotMatch(r.text, /whsec_/);
        if (path.startsWith('/_hookd/deliveries/')) assert.ok(!r.text.includes(hook.Id), r.text);
      }
      assert.deepEqual((await api(d.url, bob, 'GET', '/hooks')).body, []);
      assert.equal(
        (await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${hook.Id}/secret`)).body.Secret,
        secret,
        "bob's rotate changed nothing",
      );
      // A queued redelivery is pending at once (the 202 comes after it is queued): still ended,
      // with its one attempt, nothing was queued, so nothing more can be sent.
      const log = await until(
        'the delivery ended',
        async () => (await api<DeliveryView>(d.url, d.token, 'GET', `/_hookd/deliveries/${id}`)).body,
        (v) => v.Status !== 'pending',
      );
      assert.equal(log.Attempts, 1);
      assert.equal(rcv.on('/private').length, 1, "bob's redeliver sent nothing");
    } finally {
      await deleteHook(hook.Id);
    }
  });
});

describe('hookctl against the daemon', () => {
  it('hookctl deliveries HOOK lists the ids; hookctl redeliver ID and --hook queue them again (exit 0)', async () => {
    assertBuilt();
    rcv.answer = () => ({ status: 200 });
    const hook = await hookOn('/ctl', '/ctl');
    const env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
    try {
      await report(['/ctl/1', '/ctl/2']);
      const ids = (await rcv.waitFor('/ctl', 2)).map((c) => c.headers['webhook-id'] as string);
      await until(
        'the log',
        async () => (await deliveries(hook.Id, '?status=succeeded')).body,
        (v) => v.length === 2,
      );

      const list = await hookctl(['deliveries', hook.Id], { env });
      assert.equal(list.code, 0, list.stderr);
      const rows = list.stdout.trim().split('\n');
      assert.equal(rows.length, 2);
      for (const id of ids) assert.ok(list.stdout.includes(id), `${id} missing from:\n${list.stdout}`);
      for (const r of rows) assert.equal(r.split('\t')[1], 'succeeded');

      const json = await hookctl(['deliveries', hook.Id, '--status', 'succeeded', '-o', 'json'], { env });
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual((JSON.parse(json.stdout) as DeliveryView[]).map((x) => x.Id).sort(), [...ids].sort());

      const one = await hookctl(['redeliver', ids[0]!], { env });
      assert.equal(one.code, 0, one.stderr);
      assert.equal(one.stdout.trim(), ids[0]);
      const third = (await rcv.waitFor('/ctl', 3))[2]!;
      assert.equal(third.headers['webhook-id'], ids[0]);

      await until(
        'the log',
        async () => (await deliveries(hook.Id, '?status=succeeded')).body,
        (v) => v.length === 2,
      );
      const bulk = await hookctl(['redeliver', '--hook', hook.Id, '--status', 'succeeded'], { env });
      assert.equal(bulk.code, 0, bulk.stderr);
      assert.match(bulk.stderr, new RegExp(`queued 2 deliveries of ${hook.Id} again`));
      const again = (await rcv.waitFor('/ctl', 5)).slice(3).map((c) => c.headers['webhook-id'] as string);
      assert.deepEqual(again.sort(), [...ids].sort());

      const unknown = await hookctl(['redeliver', 'msg_00000000000000000000000000'], { env });
      assert.equal(unknown.code, 1, unknown.stderr);
    } finally {
      await deleteHook(hook.Id);
    }
  });
});

describe('at-least-once across a crash', () => {
  it('kill -9 after a delivery was recorded but before it succeeded: after a restart it arrives, same webhook-id', async () => {
    rcv.answer = (c, n) => (c.path === '/crash' && n === 1 ? { status: 500 } : { status: 200 });
    const first = await spawnHookd();
    let second: Awaited<ReturnType<typeof spawnHookd>> | undefined;
    try {
      const hook = await createHook(first, {
        PathPattern: '/crash',
        Methods: ['GET'],
        Callback: `${rcv.url}/crash`,
      });
      const r = await api(first.url, first.token, 'POST', '/_hookd/report', {
        Method: 'GET',
        Path: '/crash/1',
        StatusCode: 200,
      });
      assert.equal(r.status, 202, r.text);
      const [call] = await rcv.waitFor('/crash', 1);
      const id = call!.headers['webhook-id'] as string;
      await until(
        'the first attempt on record',
        async () => (await api<DeliveryView>(first.url, first.token, 'GET', `/_hookd/deliveries/${id}`)).body,
        (v) => v.Attempts === 1 && v.Status === 'pending',
      );
      await first.kill();

      second = await spawnHookd([], { dataDir: first.dataDir });
      const [, again] = await rcv.waitFor('/crash', 2, 9000);
      assert.equal(again!.headers['webhook-id'], id);
      assert.equal(again!.body, call!.body);
      const done = await until(
        'the delivery after the restart',
        async () =>
          (await api<DeliveryView>(second!.url, second!.token, 'GET', `/_hookd/deliveries/${id}`)).body,
        (v) => v.Status === 'succeeded',
      );
      assert.equal(done.Attempts, 2);
      assert.equal(done.HookId, hook.Id);
      assert.equal(rcv.on('/crash').length, 2, 'sent once more, not twice more');
    } finally {
      if (second) await second.stop();
      else await first.kill();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});
