/**
 * The receivers' own signature formats: `github` (X-Hub-Signature-256) checked by a receiver
 * written from GitHub's documentation ("Validating webhook deliveries": HMAC-SHA256 of the raw
 * payload with the webhook secret as key, hex digest, prefixed `sha256=`, compared in constant
 * time), templates checked by receivers of those formats, and the 400s of bad templates.
 */
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { validateHook } from '../../src/hook/index.js';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

/**
 * GitHub's documented check, on the raw body bytes: `sha256=` + hex HMAC-SHA256 keyed with the
 * secret as configured, compared with crypto.timingSafeEqual (lengths first, as it requires).
 */
function githubVerifies(secret: string, header: string | string[] | undefined, raw: Buffer): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
  const got = Buffer.from(header);
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** Stripe's documented check: `t=…,v1=…`, HMAC-SHA256 hex of `${t}.${raw body}`. */
function stripeVerifies(secret: string, header: string | string[] | undefined, raw: Buffer): boolean {
  if (typeof header !== 'string') return false;
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  if (!parts.t || !parts.v1) return false;
  const expected = createHmac('sha256', secret).update(`${parts.t}.`).update(raw).digest();
  const got = Buffer.from(parts.v1, 'hex');
  return got.length === expected.length && timingSafeEqual(got, expected);
}

interface Verified {
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  ok: boolean;
}

/** A receiver whose answer is its verdict: 204 when the path's check passes, 401 otherwise. */
async function verifyingReceiver(
  check: (path: string, headers: IncomingHttpHeaders, raw: Buffer) => boolean,
) {
  const seen: Verified[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const ok = check(req.url ?? '', req.headers, raw);
      seen.push({ path: req.url ?? '', headers: req.headers, raw, ok });
      res.writeHead(ok ? 204 : 401).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const errorsOf = async (body: Record<string, unknown>) => {
  try {
    await validateHook({ PathPattern: '/x', Methods: ['GET'], Callback: 'https://example.com/cb', ...body });
  } catch (e) {
    return (e as { errors: { field: string; message: string }[] }).errors;
  }
  return [];
};

describe('Signature schemes of the receivers: validation', () => {
  it('takes github and templates, in order, beside v1', async () => {
    const t = {
      Header: 'X-Signature',
      Value: 't={timestamp},sig={hmac_sha256_base64}',
      Signed: '{timestamp}.{body}',
    };
    const hook = await validateHook({
      PathPattern: '/x',
      Methods: ['GET'],
      Callback: 'https://example.com/cb',
      Signature: { Schemes: ['v1', 'github', t] },
    });
    assert.deepEqual(hook.Signature, { Schemes: ['v1', 'github', t] });
  });

  it('names each problem with its field and the closest valid value', async () => {
    const cases: [unknown, string, RegExp][] = [
      [['githb'], 'Signature.Schemes[0]', /not a signature scheme.*did you mean "github"/],
      [
        [{ Header: 'X-Sig', Value: 'sha256={hmac_sha256}' }],
        'Signature.Schemes[0].Value',
        /did you mean \{hmac_sha256_hex\}/,
      ],
      [
        [{ Header: 'X-Sig', Value: 'static' }],
        'Signature.Schemes[0].Value',
        /must contain \{hmac_sha256_hex\} or \{hmac_sha256_base64\}/,
      ],
      [
        [{ Header: 'X-Sig', Value: '{hmac_sha256_hex}', Signed: '{timestamp}' }],
        'Signature.Schemes[0].Signed',
        /must contain \{body\}/,
      ],
      [
        [{ Header: 'X-Sig', Value: '{hmac_sha256_hex}\r\nX-Evil: 1' }],
        'Signature.Schemes[0].Value',
        /no CR, LF/,
      ],
      [
        [{ Header: 'Content-Length', Value: '{hmac_sha256_hex}' }],
        'Signature.Schemes[0].Header',
        /set by hookd/,
      ],
      [[{ Header: 'X Sig', Value: '{hmac_sha256_hex}' }], 'Signature.Schemes[0].Header', /header name/],
      [
        [{ Header: 'X-Sig', Valeu: '{hmac_sha256_hex}' }],
        'Signature.Schemes[0].Valeu',
        /did you mean `Value`/,
      ],
      [
        ['github', { Header: 'x-hub-signature-256', Value: '{hmac_sha256_hex}' }],
        'Signature.Schemes[1]',
        /x-hub-signature-256, which Schemes\[0\] sends/,
      ],
      [['github', 'github'], 'Signature.Schemes[1]', /repeats Schemes\[0\]/],
      [['v1', 'v1a', 'github', 'v1', 'v1'], 'Signature.Schemes', /1 to 4/],
    ];
    for (const [schemes, field, message] of cases) {
      const errors = await errorsOf({ Signature: { Schemes: schemes } });
      const e = errors.find((x) => x.field === field);
      assert.ok(e, `${JSON.stringify(schemes)}: ${JSON.stringify(errors)}`);
      assert.match(e.message, message);
      assert.equal(errors.filter((x) => x.field.startsWith('Signature')).length, 1, JSON.stringify(errors));
    }
  });

  it('refuses a hook header that a signature scheme sends', async () => {
    const errors = await errorsOf({
      Signature: { Schemes: ['github'] },
      Headers: { 'X-Hub-Signature-256': 'x' },
    });
    assert.deepEqual(
      errors.map((e) => e.field),
      ['Headers.X-Hub-Signature-256'],
    );
  });
});

describe('Signature schemes of the receivers, through hookd', () => {
  let d: TestDaemon;
  const secrets: Record<string, string> = {};
  let rcv: Awaited<ReturnType<typeof verifyingReceiver>>;
  before(async () => {
    d = await startHookd();
    rcv = await verifyingReceiver((path, headers, raw) => {
      const secret = secrets[path.slice(1)] ?? '';
      if (path === '/github' || path === '/both')
        return githubVerifies(secret, headers['x-hub-signature-256'], raw);
      if (path === '/stripe') return stripeVerifies(secret, headers['stripe-signature'], raw);
      if (path === '/shopify') {
        const expected = createHmac('sha256', secret).update(raw).digest('base64');
        return headers['x-shopify-hmac-sha256'] === expected;
      }
      return false;
    });
  });
  after(async () => {
    await d?.close();
    await rcv?.close();
  });

  const hookFor = async (name: string, schemes: unknown[]) => {
    const hook = await createHook(d, {
      PathPattern: `/${name}/(*)`,
      Methods: ['GET'],
      Type: 1,
      Callback: `${rcv.url}/${name}`,
      CallbackContent: '{"repo": "$1", "note": "ünï € \\u2028"}',
      Signature: { Schemes: schemes },
    });
    const shown = await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${hook.Id}/secret`);
    secrets[name] = shown.body.Secret;
    return hook;
  };
  const fire = async (name: string, n: number) => {
    const r = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', [
      { Method: 'GET', Path: `/${name}/r${n}`, StatusCode: 200, Phase: 'after' },
    ]);
    assert.equal(r.body.fired, 1, r.text);
    await until(`callback ${n} at /${name}`, () => rcv.seen.filter((s) => s.path === `/${name}`).length >= n);
    return rcv.seen.filter((s) => s.path === `/${name}`)[n - 1]!;
  };
  const lastStatus = async (hookId: string) => {
    const r = await api<{ Status: string; LastStatusCode: number | null }[]>(
      d.url,
      d.token,
      'GET',
      `/hooks/${hookId}/deliveries?limit=1`,
    );
    assert.equal(r.status, 200, r.text);
    return r.body[0] && `${r.body[0].Status} ${r.body[0].LastStatusCode}`;
  };

  it('github: a receiver that verifies as GitHub documents accepts every callback, before and after a rotation', async () => {
    const hook = await hookFor('github', ['github']);
    assert.match(secrets.github!, /^whsec_/, 'keyed with the text the API shows, prefix included');
    const first = await fire('github', 1);
    assert.ok(first.ok, `X-Hub-Signature-256: ${first.headers['x-hub-signature-256']}`);
    assert.match(String(first.headers['x-hub-signature-256']), /^sha256=[0-9a-f]{64}$/);
    assert.equal(
      first.headers['webhook-signature'],
      undefined,
      'no Standard Webhooks signature when not asked',
    );
    assert.ok(first.headers['webhook-id'], 'the id is still sent');
    await until('the delivery succeeded', async () => (await lastStatus(hook.Id)) === 'succeeded 204');
    // Keyed with the decoded bytes instead, the same check fails: the key is the text.
    const decoded = Buffer.from(secrets.github!.slice('whsec_'.length), 'base64');
    const wrong = `sha256=${createHmac('sha256', decoded).update(first.raw).digest('hex')}`;
    assert.notEqual(first.headers['x-hub-signature-256'], wrong);

    const rotated = await api<{ Secret: string }>(d.url, d.token, 'POST', `/hooks/${hook.Id}/secret/rotate`);
    const old = secrets.github!;
    secrets.github = rotated.body.Secret;
    const second = await fire('github', 2);
    assert.ok(second.ok, 'signed with the new secret');
    assert.equal(githubVerifies(old, second.headers['x-hub-signature-256'], second.raw), false);
  });

  it('a receiver holding another secret refuses, and the delivery is not counted as delivered', async () => {
    const hook = await hookFor('both', ['v1', 'github']);
    const good = secrets.both!;
    secrets.both = 'whsec_c29tZXRoaW5nIGVsc2UgZW50aXJlbHkgaGVyZSEhIQ==';
    const call = await fire('both', 1);
    assert.equal(call.ok, false);
    await until('the 401 is recorded', async () => (await lastStatus(hook.Id)) === 'pending 401');
    secrets.both = good;
    // Both signatures are on it: the Standard Webhooks one checks out with the reference library.
    assert.ok(githubVerifies(good, call.headers['x-hub-signature-256'], call.raw));
    new Webhook(good).verify(call.raw.toString(), call.headers as Record<string, string>);
  });

  it('templates: a Stripe-style and a Shopify-style receiver verify unchanged', async () => {
    await hookFor('stripe', [
      {
        Header: 'Stripe-Signature',
        Value: 't={timestamp},v1={hmac_sha256_hex}',
        Signed: '{timestamp}.{body}',
      },
    ]);
    const s = await fire('stripe', 1);
    assert.ok(s.ok, `Stripe-Signature: ${s.headers['stripe-signature']}`);
    assert.equal(
      s.headers['stripe-signature']?.toString().split(',')[0],
      `t=${s.headers['webhook-timestamp']}`,
    );
    await hookFor('shopify', [{ Header: 'X-Shopify-Hmac-Sha256', Value: '{hmac_sha256_base64}' }]);
    assert.ok((await fire('shopify', 1)).ok);
  });

  it('the API refuses a bad template with a 400 naming the field', async () => {
    const r = await api<{ errors: { field: string; message: string }[] }>(d.url, d.token, 'POST', '/hooks', {
      PathPattern: '/bad',
      Methods: ['GET'],
      Callback: `${rcv.url}/bad`,
      Signature: { Schemes: [{ Header: 'X-Sig', Value: '{hmac_sha265_hex}' }] },
    });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.errors[0]?.field, 'Signature.Schemes[0].Value');
    assert.match(r.body.errors[0]!.message, /did you mean \{hmac_sha256_hex\}/);
  });
});
