/** A callback relayed to `hookctl listen` is signed the way the hook's attempts are (its Signature.Schemes). */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { relayedCallback } from '../../src/listen/index.js';
import { newSigningSecret } from '../../src/signing/index.js';
import { record } from '../store/delivery-store-contract.js';

describe('relayed callbacks', () => {
  const secret = newSigningSecret();
  const d = record('hk_relay', Date.now());

  it('carry webhook-signature (v1) by default', () => {
    const r = relayedCallback(d, secret, {});
    new Webhook(secret).verify(r.Body ?? '', r.Headers);
    assert.equal(r.Headers['X-Hub-Signature-256'], undefined);
  });

  it("carry the receiver's own format when the hook asks for it, and only that", () => {
    const r = relayedCallback(d, secret, {
      schemes: [
        'github',
        { Header: 'X-Sig', Value: '{timestamp}:{hmac_sha256_hex}', Signed: '{timestamp}.{body}' },
      ],
    });
    assert.equal(r.Headers['webhook-signature'], undefined);
    const body = r.Body ?? '';
    assert.equal(
      r.Headers['X-Hub-Signature-256'],
      `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    );
    const ts = r.Headers['webhook-timestamp']!;
    assert.equal(
      r.Headers['X-Sig'],
      `${ts}:${createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`,
    );
  });
});
