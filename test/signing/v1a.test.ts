import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { validateEndpoint } from '../../src/notifications/notification-endpoint.js';
import { newSigningSecret, publicKeyOf, secretKey, signatureFor } from '../../src/signing/index.js';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook, type Receiver, startReceiver } from '../helpers/servers.js';

// `v1a` (ed25519) signatures. The `standardwebhooks` package (1.1.1) verifies `v1`
// only and skips other schemes, so `v1a` is checked here by a verifier of the test's own that
// knows nothing of hookd but the published `whpk_` public key (Standard Webhooks' format).

/** True when one `v1a,` entry of the header verifies with the `whpk_…` key. */
function verifiesV1a(publicKey: string, headers: Record<string, string>, body: string): boolean {
  assert.match(publicKey, /^whpk_[A-Za-z0-9+/]{43}=$/);
  const raw = Buffer.from(publicKey.slice('whpk_'.length), 'base64');
  const key = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
    format: 'jwk',
  });
  const content = Buffer.from(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`);
  return headers['webhook-signature']!.split(' ').some((entry) => {
    const [scheme, sig] = entry.split(',');
    return scheme === 'v1a' && verify(null, content, key, Buffer.from(sig!, 'base64'));
  });
}

const schemesOf = (header: string) => header.split(' ').map((e) => e.split(',')[0]);

describe('v1a signatures (unit)', () => {
  const secret = newSigningSecret();
  const keys = { current: secretKey(secret), previous: undefined, previousValidUntil: 0 };
  const ts = String(Math.floor(Date.now() / 1000));
  const body = '{"a":"ünï"}';

  it('signs v1 and v1a side by side: the reference library checks v1, the public key checks v1a', () => {
    const sig = signatureFor(['v1', 'v1a'], keys, 'msg_1', ts, body, Date.now());
    assert.deepEqual(schemesOf(sig), ['v1', 'v1a']);
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': ts, 'webhook-signature': sig };
    new Webhook(secret).verify(body, headers);
    assert.ok(verifiesV1a(publicKeyOf(secret), headers, body));
    assert.equal(verifiesV1a(publicKeyOf(secret), headers, `${body} `), false, 'a changed body fails');
    assert.equal(verifiesV1a(publicKeyOf(newSigningSecret()), headers, body), false, 'another key fails');
  });

  it('signs v1 only when no schemes are given (the default), and v1a only when asked', () => {
    assert.deepEqual(schemesOf(signatureFor(undefined, keys, 'm', ts, body, 0)), ['v1']);
    const only = signatureFor(['v1a'], keys, 'm', ts, body, 0);
    assert.deepEqual(schemesOf(only), ['v1a']);
    const headers = { 'webhook-id': 'm', 'webhook-timestamp': ts, 'webhook-signature': only };
    assert.throws(() => new Webhook(secret).verify(body, headers), /No matching signature/);
  });

  it('adds the previous key during the grace period, and only then', () => {
    const old = newSigningSecret();
    const now = Date.now();
    const rotated = { current: secretKey(secret), previous: secretKey(old), previousValidUntil: now + 1000 };
    const during = signatureFor(['v1a'], rotated, 'm', ts, body, now);
    const h = (s: string) => ({ 'webhook-id': 'm', 'webhook-timestamp': ts, 'webhook-signature': s });
    assert.ok(verifiesV1a(publicKeyOf(old), h(during), body));
    assert.ok(verifiesV1a(publicKeyOf(secret), h(during), body));
    const later = signatureFor(['v1a'], rotated, 'm', ts, body, now + 1000);
    assert.equal(verifiesV1a(publicKeyOf(old), h(later), body), false);
    assert.ok(verifiesV1a(publicKeyOf(secret), h(later), body));
  });

  it('takes Signature on a notification endpoint and refuses a bad one naming the field', () => {
    const ok = validateEndpoint({ Url: 'https://example.com/n', Signature: { Schemes: ['v1a'] } });
    assert.deepEqual(ok.Signature, { Schemes: ['v1a'] });
    assert.throws(
      () => validateEndpoint({ Url: 'https://example.com/n', Signature: { Schemes: ['v2'] } }),
      (e: Error & { errors?: { field: string }[] }) => e.errors?.[0]?.field === 'Signature.Schemes[0]',
    );
  });
});

describe('v1a signatures through a daemon', () => {
  let d: TestDaemon;
  let rcv: Receiver;
  before(async () => {
    d = await startHookd();
    rcv = await startReceiver();
  });
  after(async () => {
    await d?.close();
    await rcv?.close();
  });

  const report = (path: string) =>
    api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', [
      { Method: 'GET', Path: path, StatusCode: 200, Phase: 'after' },
    ]);

  it('refuses an unknown scheme with a 400 naming the field', async () => {
    const res = await api<{ errors: { field: string }[] }>(d.url, d.token, 'POST', '/hooks', {
      PathPattern: '/bad',
      Methods: ['GET'],
      Callback: `${rcv.url}/bad`,
      Signature: { Schemes: ['v1b'] },
    });
    assert.equal(res.status, 400);
    assert.ok(
      res.body.errors.some((e) => e.field.startsWith('Signature.Schemes')),
      res.text,
    );
  });

  it('a receiver holding only the public key verifies, before and after a rotation', async () => {
    const hook = await createHook(d, {
      PathPattern: '/orders/*',
      Methods: ['GET'],
      Type: 1,
      Callback: `${rcv.url}/v1a`,
      Signature: { Schemes: ['v1a'] },
    });
    assert.deepEqual(hook.Signature, { Schemes: ['v1a'] });
    const shown = await api<{ Secret: string; PublicKey: string }>(
      d.url,
      d.token,
      'GET',
      `/hooks/${hook.Id}/secret`,
    );
    assert.equal(shown.status, 200);
    const firstKey = shown.body.PublicKey;

    const fired = await report('/orders/1');
    assert.equal(fired.status, 202);
    assert.equal(fired.body.fired, 1, fired.text);
    const [first] = await rcv.waitFor(1);
    const h1 = first!.headers as Record<string, string>;
    assert.deepEqual(
      schemesOf(h1['webhook-signature']!),
      ['v1a'],
      'no HMAC signature when only v1a is asked',
    );
    assert.ok(verifiesV1a(firstKey, h1, first!.body));

    const rotated = await api<{ Secret: string; PublicKey: string }>(
      d.url,
      d.token,
      'POST',
      `/hooks/${hook.Id}/secret/rotate`,
    );
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.body.PublicKey, firstKey);
    assert.equal(rotated.body.PublicKey, publicKeyOf(rotated.body.Secret));

    assert.equal((await report('/orders/2')).status, 202);
    const calls = await rcv.waitFor(2);
    const h2 = calls[1]!.headers as Record<string, string>;
    assert.deepEqual(schemesOf(h2['webhook-signature']!), ['v1a', 'v1a']);
    // During the grace period the old key still verifies, so receivers switch at their pace.
    assert.ok(verifiesV1a(firstKey, h2, calls[1]!.body));
    assert.ok(verifiesV1a(rotated.body.PublicKey, h2, calls[1]!.body));
  });
});
