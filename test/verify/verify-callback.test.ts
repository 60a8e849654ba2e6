import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { publicKeyOf } from '../../src/signing/index.js';
import { verifyCallback } from '../../src/verify/index.js';
import { BASE64_ID, newSigningSecret, STRIPE, secretKey, signWithHookd } from './signed.js';

// hookd/verify against what hookd's own signing code makes, in every scheme and header shape.

const SECRET = newSigningSecret();
const BODY = '{"series":"t1","value":42,"note":"ünïcode"}';

describe('verifyCallback: every scheme hookd signs', () => {
  const s = signWithHookd(BODY, { secret: SECRET });

  it('standard (v1 and v1a), github and a template verify; ok carries the id and the timestamp', () => {
    for (const scheme of ['standard', 'github', STRIPE] as const) {
      const r = verifyCallback({ body: BODY, headers: s.headers, secret: SECRET, scheme });
      assert.deepEqual(
        r,
        { ok: true, id: s.id, timestamp: new Date(Number(s.timestamp) * 1000) },
        String(scheme),
      );
    }
  });

  it('picks standard when webhook-signature is there, github when only X-Hub-Signature-256 is', () => {
    assert.equal(verifyCallback({ body: BODY, headers: s.headers, secret: SECRET }).ok, true);
    const gh = signWithHookd(BODY, { secret: SECRET, schemes: ['github'] });
    assert.equal(gh.headers['webhook-signature'], undefined);
    assert.equal(verifyCallback({ body: BODY, headers: gh.headers, secret: SECRET }).ok, true);
    const none = verifyCallback({ body: BODY, headers: { 'webhook-id': 'x' }, secret: SECRET });
    assert.deepEqual(none.ok, false);
  });

  it('v1a verifies with the public key alone (whpk_), and v1 does not', () => {
    const v1a = signWithHookd(BODY, { secret: SECRET, schemes: ['v1a'] });
    const pk = publicKeyOf(SECRET);
    assert.equal(verifyCallback({ body: BODY, headers: v1a.headers, secret: pk }).ok, true);
    assert.equal(verifyCallback({ body: BODY, headers: v1a.headers, secret: SECRET }).ok, true);
    const v1 = signWithHookd(BODY, { secret: SECRET, schemes: ['v1'] });
    assert.equal(verifyCallback({ body: BODY, headers: v1.headers, secret: pk }).ok, false);
  });

  it('a base64 template with the id in the header', () => {
    const t = signWithHookd(BODY, { secret: SECRET, schemes: [{ ...BASE64_ID }] });
    assert.match(t.headers['X-Sig']!, /^id=dl_verify\w+;mac=[A-Za-z0-9+/]{43}=$/);
    assert.equal(
      verifyCallback({ body: BODY, headers: t.headers, secret: SECRET, scheme: BASE64_ID }).ok,
      true,
    );
    const other = { ...t.headers, 'X-Sig': t.headers['X-Sig']!.replace(/^id=\w+/, 'id=dl_other') };
    assert.equal(verifyCallback({ body: BODY, headers: other, secret: SECRET, scheme: BASE64_ID }).ok, false);
  });

  it('the body as bytes verifies the same', () => {
    assert.equal(verifyCallback({ body: Buffer.from(BODY), headers: s.headers, secret: SECRET }).ok, true);
    assert.equal(
      verifyCallback({
        body: new TextEncoder().encode(BODY),
        headers: s.headers,
        secret: SECRET,
        scheme: 'github',
      }).ok,
      true,
    );
  });
});

describe('verifyCallback refuses', () => {
  const s = signWithHookd(BODY, { secret: SECRET });
  const schemes = ['standard', 'github', STRIPE] as const;

  it('a changed body, in every scheme', () => {
    for (const scheme of schemes) {
      const r = verifyCallback({
        body: BODY.replace('42', '43'),
        headers: s.headers,
        secret: SECRET,
        scheme,
      });
      assert.equal(r.ok, false, String(scheme));
      assert.match(r.ok ? '' : r.reason, /does not match|no signature matches/);
    }
  });

  it('a wrong secret, in every scheme', () => {
    for (const scheme of schemes) {
      assert.equal(
        verifyCallback({ body: BODY, headers: s.headers, secret: newSigningSecret(), scheme }).ok,
        false,
      );
    }
  });

  it('an old (or future) timestamp beyond the tolerance, 300 s by default', () => {
    const old = signWithHookd(BODY, { secret: SECRET, now: Date.now() - 301_000 });
    for (const scheme of schemes) {
      const r = verifyCallback({ body: BODY, headers: old.headers, secret: SECRET, scheme });
      assert.deepEqual(r, {
        ok: false,
        reason: 'the timestamp is more than 300 s from now (a replay, or a clock off)',
      });
      assert.equal(
        verifyCallback({ body: BODY, headers: old.headers, secret: SECRET, scheme, toleranceSeconds: 600 })
          .ok,
        true,
      );
    }
    const ahead = signWithHookd(BODY, { secret: SECRET, now: Date.now() + 400_000 });
    assert.equal(verifyCallback({ body: BODY, headers: ahead.headers, secret: SECRET }).ok, false);
    const fixed = verifyCallback({
      body: BODY,
      headers: old.headers,
      secret: SECRET,
      now: new Date(Number(old.timestamp) * 1000),
    });
    assert.equal(fixed.ok, true);
  });

  it('a rotated-out secret once its grace period is over; during it either secret verifies', () => {
    const oldSecret = newSigningSecret();
    const newSecret = newSigningSecret();
    const now = Date.now();
    const inGrace = {
      current: secretKey(newSecret),
      previous: secretKey(oldSecret),
      previousValidUntil: now + 60_000,
    };
    const during = signWithHookd(BODY, { secret: newSecret, schemes: ['v1', 'v1a'], keys: inGrace, now });
    for (const secret of [oldSecret, newSecret, publicKeyOf(oldSecret), [newSigningSecret(), oldSecret]]) {
      assert.equal(verifyCallback({ body: BODY, headers: during.headers, secret }).ok, true);
    }
    const over = { ...inGrace, previousValidUntil: now - 1 };
    const afterGrace = signWithHookd(BODY, { secret: newSecret, schemes: ['v1', 'v1a'], keys: over, now });
    assert.equal(verifyCallback({ body: BODY, headers: afterGrace.headers, secret: oldSecret }).ok, false);
    assert.equal(
      verifyCallback({ body: BODY, headers: afterGrace.headers, secret: publicKeyOf(oldSecret) }).ok,
      false,
    );
    assert.equal(
      verifyCallback({ body: BODY, headers: afterGrace.headers, secret: [oldSecret, newSecret] }).ok,
      true,
    );
  });

  it('missing or malformed headers, with the reason; a malformed secret is the caller’s TypeError', () => {
    const { 'webhook-timestamp': _t, ...noTime } = s.headers;
    assert.deepEqual(verifyCallback({ body: BODY, headers: noTime, secret: SECRET }), {
      ok: false,
      reason: 'no webhook-timestamp header',
    });
    const junk = { ...s.headers, 'webhook-signature': 'v2,abc v1' };
    assert.equal(verifyCallback({ body: BODY, headers: junk, secret: SECRET }).ok, false);
    const gh = { ...s.headers, 'X-Hub-Signature-256': 'sha1=00' };
    assert.equal(verifyCallback({ body: BODY, headers: gh, secret: SECRET, scheme: 'github' }).ok, false);
    assert.throws(() => verifyCallback({ body: BODY, headers: s.headers, secret: [] }), TypeError);
    assert.throws(() => verifyCallback({ body: BODY, headers: s.headers, secret: 'whpk_short' }), /32 bytes/);
  });
});

describe('verifyCallback: header shapes of every transport', () => {
  const s = signWithHookd(BODY, { secret: SECRET });
  const verifies = (headers: Parameters<typeof verifyCallback>[0]['headers']) =>
    (['standard', 'github', STRIPE] as const).every(
      (scheme) => verifyCallback({ body: BODY, headers, secret: SECRET, scheme }).ok,
    );

  it("HTTP: Node's lower-cased IncomingHttpHeaders, and fetch's Headers", () => {
    const lower = Object.fromEntries(Object.entries(s.headers).map(([k, v]) => [k.toLowerCase(), v]));
    assert.ok(verifies(lower));
    assert.ok(verifies(new Headers(s.headers)));
  });

  it('AMQP headers: names as sent, values as strings or bytes', () => {
    const amqp = Object.fromEntries(
      Object.entries(s.headers).map(([k, v], i) => [k, i % 2 ? Buffer.from(v) : v]),
    );
    assert.ok(verifies(amqp));
  });

  it('MQTT 5 user properties: a value or a list of values', () => {
    const mqtt = Object.fromEntries(Object.entries(s.headers).map(([k, v]) => [k, [v]]));
    assert.ok(verifies(mqtt));
  });

  it("NATS headers (the client's MsgHdrs), and Redis stream fields", () => {
    const h = natsHeaders();
    for (let i = 0; i < s.list.length; i += 2) h.append(s.list[i]!, s.list[i + 1]!);
    assert.ok(verifies(h));
    const redis: Record<string, string> = { body: BODY };
    for (let i = 0; i < s.list.length; i += 2) redis[s.list[i]!] = s.list[i + 1]!;
    assert.ok(verifies(redis));
  });
});
