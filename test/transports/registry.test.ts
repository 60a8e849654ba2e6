import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  builtinTransports,
  httpTransport,
  type TransportModule,
  TransportRegistry,
} from '../../src/transports/index.js';

// A transport of the test's own: a double of the extension point, never made into a live transport.
const testModule = (schemes: string[]): TransportModule => ({
  schemes,
  receiverKey: (u) => `${u.protocol}//${u.host}`,
  check: () => undefined,
  escapeValue: (v) => encodeURIComponent(v),
  describe: (u) => `${u.protocol}//${u.host}`,
  create: () => {
    throw new Error('not made in this test');
  },
});

describe('TransportRegistry', () => {
  it('has HTTP(S) first among the built-in transports', () => {
    assert.equal(builtinTransports[0], httpTransport);
    const r = new TransportRegistry();
    assert.deepEqual(r.schemes.slice(0, 2), ['http', 'https']);
  });

  it('finds a module by scheme, with or without the colon, and nothing for an unknown one', () => {
    const q = testModule(['tq', 'tqs']);
    const r = new TransportRegistry([httpTransport, q]);
    assert.equal(r.forScheme('https'), httpTransport);
    assert.equal(r.forScheme('tqs:'), q);
    assert.equal(r.forScheme('amqp-nope'), undefined);
    assert.deepEqual(r.schemes, ['http', 'https', 'tq', 'tqs']);
  });

  it('refuses two modules that claim the same scheme', () => {
    assert.throws(
      () => new TransportRegistry([httpTransport, testModule(['tq', 'https'])]),
      /two transports claim the scheme https/,
    );
  });

  it('tells the engine how to escape template values: HTTP takes none, an escaping module its own', () => {
    const r = new TransportRegistry([httpTransport, testModule(['tq'])]);
    assert.equal(r.escapeFor('http://127.0.0.1/$1'), undefined);
    assert.equal(r.escapeFor('TQ://127.0.0.1/$1')?.('a/b'), 'a%2Fb');
    assert.equal(r.escapeFor('nope://127.0.0.1/'), undefined);
    assert.equal(r.escapeFor('no scheme'), undefined);
  });

  it('keys an HTTP receiver by its origin, never by its credentials', () => {
    const u = new URL('https://user:pw@example.com:8443/a/b?c=1');
    assert.equal(httpTransport.receiverKey(u), 'https://example.com:8443');
    assert.equal(httpTransport.describe(u), 'https://example.com:8443/a/b');
  });
});
