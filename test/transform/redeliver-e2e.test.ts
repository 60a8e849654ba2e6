import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { api } from '../helpers/hookd.js';
import { proxyE2e } from '../helpers/proxy-e2e.js';
import { until } from '../helpers/until.js';

// A delivery whose hook's Transform failed, through a real hookd in front of a real upstream:
// recorded failed with the cause and not sent; a redelivery after the hook is fixed runs the
// fixed Transform on what the failed one was given and sends its result, once.

const e2e = proxyE2e();

interface Delivery {
  Id: string;
  Status: string;
  LastError: string | null;
  Request: { Body: string | null; Headers: Record<string, string> };
}

const deliveriesOf = (id: string) => e2e.deliveriesOf<Delivery>(id);

const BROKEN = 'function transform(event) { throw new Error("not yet"); }';
const FIXED = `function transform(event) {
  return {
    payload: { at: event.captures[0], unit: event.request.query.unit, method: event.request.method },
    headers: { "X-Fixed": "yes" },
  };
}`;

const hookBody = (path: string, transform: string) => ({
  PathPattern: `/${path}/(*)`,
  Methods: ['GET'],
  Callback: `${e2e.receiver.url}/${path}`,
  Transform: transform,
});

const get = (path: string) => fetch(`${e2e.d.url}${path}`).then((r) => r.arrayBuffer());
const failedOf = (id: string, n: number) =>
  until(`${n} failed deliveries`, async () => {
    const list = await deliveriesOf(id);
    return list.length === n && list.every((x) => x.Status === 'failed') ? list : undefined;
  });
const settle = () => new Promise((r) => setTimeout(r, 300));

describe('redelivering a delivery whose Transform failed', () => {
  it('is failed with the cause and not sent; after the fix a redelivery sends what the fixed Transform makes, once', async () => {
    const hook = await e2e.hook(hookBody('fixme', BROKEN));
    e2e.receiver.reset();
    await get('/fixme/r1?unit=kWh');
    const [failed] = await failedOf(hook.Id, 1);
    assert.match(failed!.LastError!, /^Transform: (Error: not yet|exceeded 50 ms)/);
    await settle();
    assert.equal(e2e.receiver.calls.filter((c) => c.url === '/fixme').length, 0, 'nothing was sent');

    // Still broken: the redelivery says so, sends nothing, and the delivery stays failed.
    const again = await api(e2e.d.url, e2e.d.token, 'POST', `/_hookd/deliveries/${failed!.Id}/redeliver`);
    assert.equal(again.status, 409, again.text);
    assert.match(again.text, /Transform failed again/);
    await settle();
    assert.equal(e2e.receiver.calls.length, 0);
    const [still] = await deliveriesOf(hook.Id);
    assert.equal(still!.Status, 'failed');
    assert.match(still!.LastError!, /^Transform: /);

    const put = await api(e2e.d.url, e2e.d.token, 'PUT', `/hooks/${hook.Id}`, hookBody('fixme', FIXED));
    assert.equal(put.status, 200, put.text);
    const res = await api(e2e.d.url, e2e.d.token, 'POST', `/_hookd/deliveries/${failed!.Id}/redeliver`);
    assert.equal(res.status, 202, res.text);
    const [call] = await e2e.receiver.waitFor(1);
    assert.deepEqual(JSON.parse(call!.body), { at: 'r1', unit: 'kWh', method: 'GET' });
    assert.equal(call!.headers['x-fixed'], 'yes');
    await settle();
    assert.equal(e2e.receiver.calls.length, 1, 'sent once');
    const rec = await until('the redelivery succeeded', async () => {
      const [r] = await deliveriesOf(hook.Id);
      return r?.Status === 'succeeded' ? r : undefined;
    });
    assert.equal(rec.Request.Body, call!.body, 'what was sent is what is recorded');
    assert.equal(rec.LastError, null);

    // The recorded request is what a later redelivery sends: the Transform does not run again.
    const put2 = await api(e2e.d.url, e2e.d.token, 'PUT', `/hooks/${hook.Id}`, hookBody('fixme', BROKEN));
    assert.equal(put2.status, 200, put2.text);
    e2e.receiver.reset();
    const res2 = await api(e2e.d.url, e2e.d.token, 'POST', `/_hookd/deliveries/${failed!.Id}/redeliver`);
    assert.equal(res2.status, 202, res2.text);
    const [call2] = await e2e.receiver.waitFor(1);
    assert.equal(call2!.body, call!.body);
    await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${hook.Id}`);
  });

  it('bulk redelivery takes them back as well, each through the fixed Transform', async () => {
    const hook = await e2e.hook(hookBody('bulkfix', BROKEN));
    e2e.receiver.reset();
    await get('/bulkfix/a?unit=W');
    await get('/bulkfix/b?unit=Wh');
    await failedOf(hook.Id, 2);
    const put = await api(e2e.d.url, e2e.d.token, 'PUT', `/hooks/${hook.Id}`, hookBody('bulkfix', FIXED));
    assert.equal(put.status, 200, put.text);
    const res = await api<{ queued: number }>(e2e.d.url, e2e.d.token, 'POST', `/hooks/${hook.Id}/redeliver`, {
      status: 'failed',
    });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.queued, 2);
    const calls = await e2e.receiver.waitFor(2);
    assert.deepEqual(calls.map((c) => JSON.parse(c.body).at).sort(), ['a', 'b']);
    await settle();
    assert.equal(e2e.receiver.calls.length, 2);
    await api(e2e.d.url, e2e.d.token, 'DELETE', `/hooks/${hook.Id}`);
  });
});
