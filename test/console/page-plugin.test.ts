import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { isHttps, pageErrorOf } from '../../src/console/page-plugin.js';
import { HookdError } from '../../src/errors/index.js';

describe('the page error of a console or portal request', () => {
  it("keeps a hookd error, names a 413 and another client error, and leaves hookd's own faults", () => {
    const own = new HookdError('NOT_FOUND', 'no such hook');
    assert.equal(pageErrorOf(own), own);
    const big = pageErrorOf(Object.assign(new Error('Request body is too large'), { statusCode: 413 }));
    assert.equal(big?.code, 'PAYLOAD_TOO_LARGE');
    assert.equal(big?.message, 'the form is too large');
    const bad = pageErrorOf(Object.assign(new Error('Unsupported Media Type'), { statusCode: 415 }));
    assert.equal(bad?.code, 'BAD_REQUEST');
    assert.equal(bad?.message, 'Unsupported Media Type');
    assert.equal(pageErrorOf(Object.assign(new Error('boom'), { statusCode: 503 })), undefined);
    assert.equal(pageErrorOf(new Error('boom')), undefined);
  });
});

describe('whether the browser reached hookd over https', () => {
  const req = (encrypted: boolean, proto?: string) =>
    ({
      socket: { encrypted, remoteAddress: '10.0.0.1' },
      headers: proto === undefined ? {} : { 'x-forwarded-proto': proto },
    }) as unknown as IncomingMessage;
  const trusted = (a: string | undefined) => a === '10.0.0.1';
  const nobody = () => false;

  it('believes a TLS socket, and X-Forwarded-Proto only from a trusted proxy (its first value)', () => {
    assert.equal(isHttps(nobody, req(true)), true);
    assert.equal(isHttps(nobody, req(false)), false);
    assert.equal(isHttps(trusted, req(false, 'HTTPS, http')), true);
    assert.equal(isHttps(trusted, req(false, 'http, https')), false);
    assert.equal(isHttps(nobody, req(false, 'https')), false, 'an untrusted peer cannot claim https');
  });
});
