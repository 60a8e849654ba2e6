/**
 * A hook changed while its deliveries are pending: each pending delivery keeps the Callback URL
 * it fired with, and takes everything else from the hook as it is now (its delivery plan): TLS,
 * OAuth2, signature schemes, rate limit and retry schedule. Real parts throughout: an HTTPS
 * receiver that wants the test CA's client certificate, a token endpoint on loopback, a spawned
 * hookd, the hook replaced through the API.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { makeCertificates, skip } from '../helpers/certificates.js';
import { api, startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { createHook } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

interface Seen {
  path: string;
  authorization: string | undefined;
  signature: string;
}

interface Listed {
  Id: string;
  Status: string;
  Attempts: number;
  Request: { Url: string };
}

interface Detail {
  Status: string;
  Attempts: number;
  AttemptLog: {
    Attempt: number;
    Error: string | null;
    StatusCode: number | null;
    RateLimitWaitMs?: number;
  }[];
}

describe('a hook edited while its deliveries are pending', { skip, timeout: 60_000 }, () => {
  const dir = tempDir('hookd-edit-');
  let pem: ReturnType<typeof makeCertificates>;
  let receiver: Server;
  let tokens: HttpServer;
  let url = '';
  let tokenUrl = '';
  const seen: Seen[] = [];
  let d: TestDaemon;

  before(async () => {
    pem = makeCertificates(dir);
    // The first request that gets through TLS is answered 503, every later one 204.
    receiver = createServer(
      { key: pem.serverKey, cert: pem.serverCert, ca: pem.ca, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        seen.push({
          path: req.url ?? '',
          authorization: req.headers.authorization,
          signature: String(req.headers['webhook-signature'] ?? ''),
        });
        req.resume();
        req.on('end', () => res.writeHead(seen.length === 1 ? 503 : 204).end());
      },
    );
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    tokens = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(
            JSON.stringify({ access_token: 'token-of-the-new-plan', token_type: 'Bearer', expires_in: 300 }),
          ),
      );
    });
    await new Promise<void>((r) => tokens.listen(0, '127.0.0.1', r));
    tokenUrl = `http://127.0.0.1:${(tokens.address() as AddressInfo).port}/token`;
    d = await startHookd();
  });
  after(async () => {
    await d?.close();
    await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
    await new Promise<void>((r) => (tokens ? tokens.close(() => r()) : r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the URL it fired with and takes the new TLS, auth, schemes, rate limit and schedule', async () => {
    const base = { PathPattern: '/edit/*', Methods: ['GET'], Type: 1 };
    // As fired: no client certificate (the receiver refuses the handshake), two attempts in all.
    const hook = await createHook(d, { ...base, Callback: `${url}/as-fired`, RetrySchedule: [0, 2] });
    for (const path of ['/edit/a', '/edit/b']) {
      const r = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', [
        { Method: 'GET', Path: path, StatusCode: 200, Phase: 'after' },
      ]);
      assert.equal(r.body.fired, 1, r.text);
    }
    const list = () =>
      api<Listed[]>(d.url, d.token, 'GET', `/hooks/${hook.Id}/deliveries?limit=10`).then((r) => r.body);
    await until(
      'both deliveries pending after a refused first attempt',
      list,
      (l) => l.length === 2 && l.every((x) => x.Status === 'pending' && x.Attempts === 1),
    );
    assert.equal(seen.length, 0, 'the receiver saw nothing without the client certificate');

    // The edit: another URL, and TLS, OAuth2, v1a, a rate limit of one a second, four attempts.
    const put = await api(d.url, d.token, 'PUT', `/hooks/${hook.Id}`, {
      ...base,
      Callback: `${url}/after-the-edit`,
      Tls: { ClientCertificate: pem.clientCert, ClientKey: pem.clientKey, CaCertificates: pem.ca },
      Auth: { OAuth2: { TokenUrl: tokenUrl, ClientId: 'hookd', ClientSecret: 'edit-secret' } },
      Signature: { Schemes: ['v1a'] },
      RateLimit: { PerSecond: 1, Burst: 1 },
      RetrySchedule: [0, 2, 0.2, 0.2],
    });
    assert.equal(put.status, 200, put.text);

    const l = await until(
      'both delivered after the edit',
      list,
      (l) => l.length === 2 && l.every((x) => x.Status === 'succeeded'),
    );
    for (const x of l) assert.equal(x.Request.Url, `${url}/as-fired`, 'the URL stays the one it fired with');
    assert.ok(seen.length >= 3, `the receiver saw ${seen.length} requests`);
    for (const s of seen) {
      assert.equal(s.path, '/as-fired', 'sent to the URL it fired with');
      assert.equal(s.authorization, 'Bearer token-of-the-new-plan', 'the new OAuth2 credentials');
      assert.match(s.signature, /^v1a,/, 'signed with the new schemes only');
      assert.doesNotMatch(s.signature, /(^| )v1,/);
    }
    const details = await Promise.all(
      l.map((x) => api<Detail>(d.url, d.token, 'GET', `/_hookd/deliveries/${x.Id}`).then((r) => r.body)),
    );
    // One of them was answered 503 at its second attempt: a third came, as only the new
    // schedule (four entries, not two) allows.
    const retried = details.find((x) => x.AttemptLog.some((a) => a.StatusCode === 503));
    assert.ok(retried, JSON.stringify(details));
    assert.equal(retried.Attempts, 3, JSON.stringify(retried.AttemptLog));
    // Both came due at once after the edit: the new limit of one a second held one back.
    const waits = details.flatMap((x) => x.AttemptLog.map((a) => a.RateLimitWaitMs ?? 0));
    assert.ok(
      waits.some((w) => w > 0),
      `a rate limit wait in the delivery log: ${JSON.stringify(details.map((x) => x.AttemptLog))}`,
    );
  });
});
