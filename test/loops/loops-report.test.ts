import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Forwarder } from '../helpers/forwarder.js';
import { api, type TestDaemon } from '../helpers/hookd.js';
import { createHook, send, sleep, type Upstream } from '../helpers/servers.js';
import { counter, until } from '../helpers/until.js';
import { type LoopRig, startLoopRig } from './loop-rig.js';

// The rest of "no loops": a callback aimed at hookd's report API (not its proxy)
// is cut by the same signed mark, and a notification endpoint at hookd's own address is refused
// at create time as a hook's Callback is.

const WINDOW_MS = 3000;

describe('no loops: the report API and notification endpoints', () => {
  let rig: LoopRig | undefined;
  let upstream: Upstream;
  let d: TestDaemon;
  /** hookd under another address: the create-time check cannot know it. */
  let alias: Forwarder;

  before(async () => {
    rig = await startLoopRig();
    ({ upstream, d, alias } = rig);
  });
  after(async () => {
    await rig?.close();
  });

  it('a hook whose callback reports to hookd itself: one callback, accepted, fires nothing, the loop counted', async () => {
    const hook = await createHook(d, {
      PathPattern: '/rloop/(*)',
      Methods: ['*'],
      Callback: `${alias.url}/_hookd/report`,
      CallbackMethod: 'POST',
      CallbackContent: '{"Method":"GET","Path":"/rloop/again","StatusCode":200}',
      CallbackContentMediaType: 'application/json',
      Headers: { Authorization: `Bearer ${d.token}` },
      RetrySchedule: [0],
    });
    const start = Date.now();
    assert.equal((await send(`${d.url}/rloop/start`)).status, 200);
    await until(
      'report loop cut',
      () => counter(d.opsUrl, 'hookd_loops_cut_total', 'kind="callback"'),
      (n) => n >= 1,
    );
    // The measure: hits from one request within 3 s (a loop would have made thousands).
    const left = WINDOW_MS - (Date.now() - start);
    if (left > 0) await sleep(left);
    const list = await api<{ Id: string }[]>(d.url, d.token, 'GET', `/hooks/${hook.Id}/deliveries`);
    assert.equal(list.status, 200, list.text);
    assert.ok(list.body.length <= 5, `callbacks in 3 s: ${list.body.length}`);
    assert.equal(list.body.length, 1, 'the report made by the callback fired nothing');
    const one = await api<{ AttemptLog: { StatusCode: number | null; ResponseBody: string | null }[] }>(
      d.url,
      d.token,
      'GET',
      `/_hookd/deliveries/${list.body[0]!.Id}`,
    );
    assert.equal(one.body.AttemptLog[0]!.StatusCode, 202, 'accepted, so that it is not retried');
    assert.deepEqual(JSON.parse(one.body.AttemptLog[0]!.ResponseBody!), { accepted: 1, fired: 0 });
    assert.deepEqual(
      upstream.requests.filter((r) => r.url.startsWith('/rloop/')).map((r) => r.url),
      ['/rloop/start'],
    );
  });

  it('the same report without the mark fires as always', async () => {
    const r = await api<{ accepted: number; fired: number }>(d.url, d.token, 'POST', '/_hookd/report', {
      Method: 'GET',
      Path: '/rloop/by-hand',
      StatusCode: 200,
    });
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.fired, 1);
  });

  it("a notification endpoint Url at hookd's own listen address: 400 naming Url and the rule", async () => {
    const port = new URL(d.url).port;
    for (const url of [`${d.url}/notify`, `http://localhost:${port}/notify`]) {
      const r = await api<{ code: string; errors: { field: string; message: string }[] }>(
        d.url,
        d.token,
        'POST',
        '/_hookd/notifications',
        { Url: url, Events: ['delivery.failed'] },
      );
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.code, 'VALIDATION_FAILED');
      assert.equal(r.body.errors[0]!.field, 'Url');
      assert.match(r.body.errors[0]!.message, /hookd itself \(its listen address/);
    }
    // Under another name hookd cannot be known at create time: accepted (the mark covers it).
    const ok = await api(d.url, d.token, 'POST', '/_hookd/notifications', {
      Url: `${alias.url}/notify`,
      Events: ['delivery.failed'],
    });
    assert.equal(ok.status, 201, ok.text);
  });
});
