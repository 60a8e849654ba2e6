import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pageErrorOf } from '../../src/console/page-plugin.js';
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
