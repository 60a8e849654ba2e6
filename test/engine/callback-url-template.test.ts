import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FiredEvent } from '../../src/engine/fired-event.js';
import { MatchEngine } from '../../src/engine/match-engine.js';
import { BEFORE_COMPLETION, type Hook } from '../../src/hook/hook.js';
import { builtinTransports, type TransportModule, TransportRegistry } from '../../src/transports/index.js';
import { storedHook } from '../store/store-contract.js';

// A transport of the test's own (a double of the extension point, not of a part of hookd): its
// subjects are dot-separated, so a value may hold no dot, and its values go URL-encoded.
const dotted: TransportModule = {
  schemes: ['dotq'],
  receiverKey: (u) => `dotq://${u.host}`,
  check: () => undefined,
  escapeValue: (v) => encodeURIComponent(v.replace(/[.*>\s]/g, '_')),
  describe: (u) => `dotq://${u.host}${u.pathname}`,
  create: () => {
    throw new Error('the engine never makes a transport');
  },
};

const hook = (over: Partial<Hook>): Hook =>
  storedHook('alice', {
    Methods: ['*'],
    Type: BEFORE_COMPLETION,
    StatusCodeWhiteList: [],
    CallbackMethod: 'POST',
    CallbackContentMediaType: 'application/json',
    ...over,
  });

function fireOne(h: Hook, path: string): FiredEvent {
  const registry = new TransportRegistry([...builtinTransports, dotted]);
  const fired: FiredEvent[] = [];
  const engine = new MatchEngine(
    { accept: (events) => fired.push(...events) },
    { callbackEscape: (callback) => registry.escapeFor(callback) },
  );
  engine.load([h]);
  engine.fire('before', { method: 'PUT', path, uri: () => `http://h${path}` });
  assert.equal(fired.length, 1);
  return fired[0]!;
}

describe('Callback URL templates', () => {
  it('fills captures and named values into a broker Callback, each escaped by its transport', () => {
    const h = hook({
      PathPattern: '/ts/(*)/data',
      Callback: 'dotq://127.0.0.1:4222/ts.$1.${REQUEST_METHOD}',
    });
    const e = fireOne(h, '/ts/a.b%20c/data');
    assert.equal(e.request.url, 'dotq://127.0.0.1:4222/ts.a_b_c.PUT');
  });

  it('URL-encodes what the transport leaves, so a value cannot add a path or a query', () => {
    const h = hook({ PathPattern: '/ts/(*)', Callback: 'dotq://127.0.0.1:4222/x?subject=ts.$1' });
    const e = fireOne(h, '/ts/a%2Fb%3Fc%26d');
    assert.equal(e.request.url, 'dotq://127.0.0.1:4222/x?subject=ts.a%2Fb%3Fc%26d');
  });

  it('keeps references it does not know, and captures the pattern lacks, as written', () => {
    const h = hook({ PathPattern: '/ts/(*)', Callback: 'dotq://127.0.0.1:4222/ts.$1.$2.$NOPE' });
    assert.equal(fireOne(h, '/ts/x').request.url, 'dotq://127.0.0.1:4222/ts.x.$2.$NOPE');
  });

  it('sends an HTTP Callback as written: HTTP takes no template values', () => {
    const h = hook({ PathPattern: '/ts/(*)', Callback: 'http://127.0.0.1:9/cb/$1' });
    assert.equal(fireOne(h, '/ts/x').request.url, 'http://127.0.0.1:9/cb/$1');
  });
});
