import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { MockAgent } from 'undici';
import { HookdClient } from '../../src/client/index.js';
import { failure } from './failure.js';

// A HookdError's `problem` is the problem document as the server sent it: every member, an
// `errors[]` entry's line and column included, with only the promised members filled in.

let agent: MockAgent;
let client: HookdClient;

beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  client = new HookdClient({ baseUrl: 'http://hookd.test', token: 't', dispatcher: agent });
});
afterEach(async () => {
  agent.assertNoPendingInterceptors();
  await agent.close();
});

describe('HookdError.problem', () => {
  it('keeps every member of the document, and each entry of errors[] whole', async () => {
    const sent = {
      type: 'urn:hookd:problem:invalid-json',
      title: 'Invalid JSON',
      status: 400,
      detail: 'the request body is not valid JSON: line 3, column 7: Unexpected token',
      code: 'INVALID_JSON',
      instance: '/hooks',
      errors: [{ field: '(body)', message: 'Unexpected token', line: 3, column: 7 }],
    };
    agent
      .get('http://hookd.test')
      .intercept({ path: '/hooks', method: 'POST' })
      .reply(400, sent, { headers: { 'content-type': 'application/problem+json' } });
    const e = await failure(
      client.hooks.create({ PathPattern: '/x', Methods: ['GET'], Callback: 'http://r/' }),
    );
    assert.deepEqual(e.problem, sent);
    assert.deepEqual([e.status, e.code, e.fields], [400, 'INVALID_JSON', ['(body)']]);
  });

  it('fills in what a document lacks, and drops an errors member that is no list', async () => {
    agent
      .get('http://hookd.test')
      .intercept({ path: '/hooks/h1', method: 'GET' })
      .reply(
        409,
        { code: 'CONFLICT', errors: 'not a list', extra: 1 },
        { headers: { 'content-type': 'application/problem+json' } },
      );
    const e = await failure(client.hooks.get('h1'));
    assert.deepEqual(e.problem, {
      type: 'about:blank',
      title: 'HTTP 409',
      status: 409,
      detail: 'HTTP 409',
      code: 'CONFLICT',
      extra: 1,
    });
    assert.deepEqual(e.fields, []);
  });
});
