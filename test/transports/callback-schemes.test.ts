import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AddressPolicy, checkCallbackTarget } from '../../src/policy/index.js';
import {
  callbackSchemeCheck,
  defaultCallbackSchemes,
  httpTransport,
  schemeProblem,
  type TransportModule,
  TransportRegistry,
} from '../../src/transports/index.js';

// A broker-like transport of the test's own (a double of the extension point): it refuses a
// wildcard in its topic, as the MQTT and NATS transports do.
const topics: TransportModule = {
  schemes: ['tq'],
  receiverKey: (u) => `tq://${u.host}`,
  check: (u) =>
    u.pathname.includes('#') || u.pathname.includes('%23') ? 'must not hold the wildcard #' : undefined,
  escapeValue: (v) => encodeURIComponent(v),
  describe: (u) => `tq://${u.host}${u.pathname}`,
  create: () => {
    throw new Error('not made in this test');
  },
};
const registry = new TransportRegistry([httpTransport, topics]);

describe('Callback schemes', () => {
  it('refuses a scheme the operator did not allow, listing those allowed', () => {
    const check = callbackSchemeCheck(registry, ['https']);
    const refusal = check(new URL('http://example.com/'));
    assert.match(refusal ?? '', /scheme "http" is not allowed/);
    assert.match(refusal ?? '', /use one of https \(the operator's --callback-schemes\)/);
    assert.equal(check(new URL('https://example.com/')), undefined);
  });

  it('suggests the closest allowed scheme for a made-up one', () => {
    const check = callbackSchemeCheck(registry);
    assert.match(check(new URL('htps://example.com/')) ?? '', /did you mean https\?/);
    assert.match(check(new URL('tqq://example.com/')) ?? '', /did you mean tq\?/);
    assert.doesNotMatch(check(new URL('gopher://example.com/')) ?? '', /did you mean/);
  });

  it("passes the transport's own rule on, and wants a host", () => {
    const check = callbackSchemeCheck(registry);
    assert.equal(check(new URL('tq://broker.example/ts/1')), undefined);
    assert.equal(check(new URL('tq://broker.example/ts/%23')), 'must not hold the wildcard #');
    assert.equal(check(new URL('tq:///ts/1')), 'must name a host');
  });

  it('the default list holds only what this build has; a list entry it lacks is refused by name', () => {
    assert.deepEqual(defaultCallbackSchemes(registry), ['http', 'https']);
    assert.equal(schemeProblem('tq', registry), undefined);
    assert.match(
      schemeProblem('htttp', registry) ?? '',
      /"htttp" is not a Callback scheme .*did you mean http\?/,
    );
  });

  it('judges a broker host by the address policy as an HTTP host: loopback is refused by default', async () => {
    const byDefault = new AddressPolicy();
    const schemes = ['http:', 'https:', 'tq:'];
    const refused = await checkCallbackTarget(new URL('tq://127.0.0.1:5672/ts'), byDefault, { schemes });
    assert.equal(refused.ok, false);
    assert.match(refused.ok ? '' : refused.message, /loopback/);
    const allowed = new AddressPolicy(['127.0.0.0/8']);
    const ok = await checkCallbackTarget(new URL('tq://127.0.0.1:5672/ts'), allowed, { schemes });
    assert.equal(ok.ok, true);
  });
});
