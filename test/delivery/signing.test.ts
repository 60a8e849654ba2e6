import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { signatureHeader } from '../../src/signing/sign-attempt.js';
import { newSigningSecret, secretKey, sign } from '../../src/signing/standard-webhooks.js';

describe('signing (Standard Webhooks)', () => {
  it('makes whsec_ secrets of 32 random bytes', () => {
    const a = newSigningSecret();
    const b = newSigningSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(secretKey(a).symmetricKeySize, 32);
    assert.notEqual(a, b);
  });

  it('signs so that the reference library verifies', () => {
    const secret = newSigningSecret();
    const ts = String(Math.floor(Date.now() / 1000));
    const body = '{"path":"/repositories/r1/timeseries/ts1","note":"ünïcødé"}';
    const keys = { current: secretKey(secret), previous: undefined, previousValidUntil: 0 };
    const headers = {
      'webhook-id': 'msg_01KAB0000000000000000000000',
      'webhook-timestamp': ts,
      'webhook-signature': signatureHeader(keys, 'msg_01KAB0000000000000000000000', ts, body, Date.now()),
    };
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(newSigningSecret()).verify(body, headers), /No matching signature/);
    assert.throws(() => new Webhook(secret).verify(`${body} `, headers), /No matching signature/);
  });

  it('adds the previous secret during the grace period, and only then', () => {
    const oldSecret = newSigningSecret();
    const newSecret = newSigningSecret();
    const now = Date.now();
    const ts = String(Math.floor(now / 1000));
    const keys = {
      current: secretKey(newSecret),
      previous: secretKey(oldSecret),
      previousValidUntil: now + 1000,
    };
    const during = signatureHeader(keys, 'msg_x', ts, 'body', now);
    assert.equal(during.split(' ').length, 2);
    const headers = { 'webhook-id': 'msg_x', 'webhook-timestamp': ts, 'webhook-signature': during };
    new Webhook(oldSecret).verify('body', headers, { jsonParse: false });
    new Webhook(newSecret).verify('body', headers, { jsonParse: false });

    const after = signatureHeader(keys, 'msg_x', ts, 'body', now + 1000);
    assert.equal(after, sign(secretKey(newSecret), 'msg_x', ts, 'body'));
    assert.throws(() =>
      new Webhook(oldSecret).verify('body', { ...headers, 'webhook-signature': after }, { jsonParse: false }),
    );
  });
});
