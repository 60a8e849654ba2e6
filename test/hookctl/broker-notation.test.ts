import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Chalk } from 'chalk';
import { formatAttempt } from '../../src/hookctl/commands/tail/index.js';
import { answerText, callbackText } from '../../src/hookctl/notation.js';

// How hookctl prints an attempt to a message broker: the target and the broker's receipt, never
// an HTTP method or status line.
const plain = new Chalk({ level: 0 });

describe('the notation of a broker callback', () => {
  it('prints the target without a method, and the receipt where an HTTP answer has its status', () => {
    assert.equal(
      callbackText('POST', 'amqp://guest:REDACTED@127.0.0.1:5672/?exchange=ts'),
      '--> amqp://guest:REDACTED@127.0.0.1:5672/?exchange=ts',
    );
    assert.equal(callbackText('POST', 'https://cb.example/h'), '--> POST https://cb.example/h');
    assert.equal(answerText(null, null, 'confirmed by 127.0.0.1:5672'), '<-- confirmed by 127.0.0.1:5672');
    assert.equal(answerText(null, 'exchange ts not found', null), '<-- exchange ts not found');
    assert.equal(answerText(204, null, 'ignored'), '<-- 204');
  });

  it('tail prints the receipt of a delivered broker attempt', () => {
    const line = formatAttempt(
      {
        kind: 'attempt',
        Time: '2026-11-28T06:00:00.000Z',
        HookId: 'hk_1',
        Method: 'POST',
        Url: 'mqtt://127.0.0.1:1883/ts/1/read',
        StatusCode: null,
        LatencyMs: 1.5,
        Outcome: 'succeeded',
        Error: null,
        Receipt: 'PUBACK from 127.0.0.1:1883, topic ts/1/read',
        Trigger: { Method: 'PUT', Path: '/ts/1', StatusCode: 204 },
      },
      plain,
      true,
    );
    assert.match(
      line,
      /--> mqtt:\/\/127\.0\.0\.1:1883\/ts\/1\/read {2}<-- PUBACK from 127\.0\.0\.1:1883, topic ts\/1\/read {2}1\.5ms/,
    );
    assert.doesNotMatch(line, /no answer|POST mqtt/);
  });
});
