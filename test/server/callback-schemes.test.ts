import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builtinTransports } from '../../src/transports/index.js';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';

// Create-time checks of a Callback's scheme (--callback-schemes) on a real daemon: create,
// replace and /_hookd/validate answer 400 naming Callback, with the list and the closest scheme.

interface Problem {
  errors?: { field: string; message: string }[];
}

const hook = (Callback: string) => ({ PathPattern: '/schemes/(*)', Callback, Methods: ['GET'] });

async function refusal(d: TestDaemon, method: string, path: string, body: unknown): Promise<string> {
  const r = await api<Problem>(d.url, d.token, method, path, body);
  assert.equal(r.status, 400, r.text);
  const e = r.body.errors?.find((x) => x.field === 'Callback');
  assert.ok(e, r.text);
  return e.message;
}

describe('--callback-schemes https', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startHookd({ callbackSchemes: ['https'] });
  });
  after(() => d.close());

  it('refuses an http Callback on create, replace and validate, listing what is allowed', async () => {
    for (const [method, path] of [
      ['POST', '/hooks'],
      ['POST', '/_hookd/validate'],
    ] as const) {
      const m = await refusal(d, method, path, hook('http://127.0.0.1:9/cb'));
      assert.match(
        m,
        /scheme "http" is not allowed.*: use one of https \(the operator's --callback-schemes\)/,
      );
    }
    const made = await api<{ Id: string }>(d.url, d.token, 'POST', '/hooks', hook('https://127.0.0.1:9/cb'));
    assert.equal(made.status, 201, made.text);
    const m = await refusal(d, 'PUT', `/hooks/${made.body.Id}`, hook('http://127.0.0.1:9/cb'));
    assert.match(m, /scheme "http" is not allowed/);
  });

  it('suggests the closest allowed scheme for a made-up one', async () => {
    const m = await refusal(d, 'POST', '/hooks', hook('htps://127.0.0.1:9/cb'));
    assert.match(m, /scheme "htps" is not allowed \(did you mean https\?\): use one of https/);
  });
});

// The first broker scheme this build has (the broker transports register themselves).
const broker = builtinTransports.flatMap((m) => m.schemes).find((s) => s !== 'http' && s !== 'https');
// The rest of a well-formed Callback of that scheme (its own shape check comes before the policy).
const SHAPE: Record<string, string> = {
  amqp: '/%2F?routing_key=q',
  amqps: '/%2F?routing_key=q',
  redis: '/0?stream=s',
};

describe('a broker Callback under the default address policy', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startHookd({ allowCallbackNets: [] });
  });
  after(() => d.close());

  it('refuses a loopback broker host as it refuses a loopback web server', async () => {
    assert.ok(broker, 'this build has a broker transport');
    const m = await refusal(
      d,
      'POST',
      '/hooks',
      hook(`${broker}://127.0.0.1:1${SHAPE[broker ?? ''] ?? '/x'}`),
    );
    assert.match(m, /loopback/);
    const web = await refusal(d, 'POST', '/hooks', hook('http://127.0.0.1:1/x'));
    assert.match(web, /loopback/);
  });
});

describe('a header a broker message keeps for itself', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startHookd();
  });
  after(() => d.close());

  it('refuses a header named body on a redis Callback (the entry carries its payload there), naming Headers', async () => {
    for (const [method, path] of [
      ['POST', '/hooks'],
      ['POST', '/_hookd/validate'],
    ] as const) {
      const r = await api<Problem>(d.url, d.token, method, path, {
        ...hook('redis://127.0.0.1:6379/0?stream=s'),
        Headers: { Body: 'x' },
      });
      assert.equal(r.status, 400, r.text);
      const e = r.body.errors?.find((x) => x.field === 'Headers.Body');
      assert.ok(e, r.text);
      assert.match(e.message, /a redis: Callback uses "body" for the message itself/);
    }
    const web = await api(d.url, d.token, 'POST', '/hooks', {
      ...hook('http://127.0.0.1:9/cb'),
      Headers: { Body: 'x' },
    });
    assert.equal(web.status, 201, `an HTTP callback may have such a header: ${web.text}`);
  });
});
