import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callbackHeaders, stampAttempt } from '../../src/delivery/callback-headers.js';

// The per-attempt headers have named places, not positions counted from the end.

const delivery = {
  id: 'msg_1',
  request: { headers: { 'Content-Type': 'application/json', 'X-Env': 'prod', 'Webhook-Id': 'spoofed' } },
};

function pairs(list: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < list.length; i += 2) out.push([list[i]!, list[i + 1]!]);
  return out;
}

describe('callback headers', () => {
  it('keeps the hook headers, drops the reserved ones, and stamps each attempt by name', () => {
    const h = callbackHeaders(delivery, 'hookd', false);
    assert.equal(h.at.traceparent, -1);
    const sent = stampAttempt(h, { timestamp: '1700000000', signature: 'v1,abc', traceparent: undefined });
    assert.deepEqual(pairs(sent), [
      ['Content-Type', 'application/json'],
      ['X-Env', 'prod'],
      ['user-agent', 'hookd'],
      ['webhook-id', 'msg_1'],
      ['webhook-timestamp', '1700000000'],
      ['webhook-signature', 'v1,abc'],
    ]);
    const again = stampAttempt(h, { timestamp: '1700000005', signature: 'v1,def', traceparent: undefined });
    assert.deepEqual(pairs(again).slice(-2), [
      ['webhook-timestamp', '1700000005'],
      ['webhook-signature', 'v1,def'],
    ]);
  });

  it('with tracing, traceparent comes first and is set per attempt', () => {
    const h = callbackHeaders({ id: 'msg_2', request: { headers: { 'User-Agent': 'mine' } } }, 'hookd', true);
    const sent = stampAttempt(h, { timestamp: '1', signature: 's', traceparent: '00-abc-def-01' });
    assert.deepEqual(pairs(sent), [
      ['traceparent', '00-abc-def-01'],
      ['User-Agent', 'mine'],
      ['webhook-id', 'msg_2'],
      ['webhook-timestamp', '1'],
      ['webhook-signature', 's'],
    ]);
  });
});
