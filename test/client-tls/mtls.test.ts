/**
 * Mutual TLS toward a receiver: a real HTTPS server that requires client certificates from the
 * test's own CA (certificates made here with openssl), a hook whose `Tls` carries the client
 * certificate and key, the key never shown by the API nor readable in the store file.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { makeCertificates, skip } from '../helpers/certificates.js';
import { api, startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { createHook } from '../helpers/servers.js';
import { counter, until } from '../helpers/until.js';

describe('mutual TLS toward a receiver', { skip }, () => {
  const dir = tempDir('hookd-mtls-');
  let pem: ReturnType<typeof makeCertificates>;
  let server: Server;
  let url = '';
  const seen: { path: string; clientCN: string | undefined }[] = [];
  const refused: string[] = [];
  let d: TestDaemon;
  /** Where the operator's notification endpoint is: the notifications it got, parsed. */
  let inbox: HttpServer;
  const notes: { type: string; data: Record<string, unknown> }[] = [];

  before(async () => {
    inbox = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        notes.push(JSON.parse(body) as { type: string; data: Record<string, unknown> });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => inbox.listen(0, '127.0.0.1', r));
    pem = makeCertificates(dir);
    server = createServer(
      { key: pem.serverKey, cert: pem.serverCert, ca: pem.ca, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        seen.push({
          path: req.url ?? '',
          clientCN: peer.subject?.CN === undefined ? undefined : String(peer.subject.CN),
        });
        req.resume();
        req.on('end', () => res.writeHead(204).end());
      },
    );
    server.on('tlsClientError', (err) => refused.push(err.message));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    d = await startHookd({}, { keepDataDir: true });
    const ep = await api(d.url, d.token, 'POST', '/_hookd/notifications', {
      Url: `http://127.0.0.1:${(inbox.address() as AddressInfo).port}/ops`,
      Events: ['hook.certificate_expiring'],
    });
    assert.equal(ep.status, 201, ep.text);
  });
  after(async () => {
    await d?.close();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
    await new Promise<void>((r) => (inbox ? inbox.close(() => r()) : r()));
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    rmSync(dir, { recursive: true, force: true });
  });

  const fire = async (path: string) => {
    const r = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', [
      { Method: 'GET', Path: path, StatusCode: 200, Phase: 'after' },
    ]);
    assert.equal(r.body.fired, 1, r.text);
  };
  const lastDelivery = async (id: string) =>
    (
      await api<{ Status: string; LastStatusCode: number | null; LastError: string | null }[]>(
        d.url,
        d.token,
        'GET',
        `/hooks/${id}/deliveries?limit=1`,
      )
    ).body[0];

  it("sends with the hook's client certificate; the receiver sees who it is", async () => {
    const hook = await createHook(d, {
      PathPattern: '/mtls/*',
      Methods: ['GET'],
      Type: 1,
      Callback: `${url}/mtls`,
      Tls: { ClientCertificate: pem.clientCert, ClientKey: pem.clientKey, CaCertificates: pem.ca },
    });
    // The test's certificate lives 2 days: the answer warns of its end.
    const warnings = (hook as unknown as { Warnings?: { Field: string; Message: string }[] }).Warnings ?? [];
    const w = warnings.find((x) => x.Field === 'Tls.ClientCertificate');
    assert.match(w?.Message ?? JSON.stringify(warnings), /^expires at \S+ \(in [12] days?\): replace Tls/);
    await fire('/mtls/1');
    await until('the receiver got the callback', () => seen.find((s) => s.path === '/mtls'));
    assert.equal(seen.find((s) => s.path === '/mtls')?.clientCN, 'hookd-client');
    await until('delivered', async () => (await lastDelivery(hook.Id))?.Status === 'succeeded');
  });

  it('without the certificate the receiver refuses the connection, and the delivery is not delivered', async () => {
    const hook = await createHook(d, {
      PathPattern: '/nocert/*',
      Methods: ['GET'],
      Type: 1,
      Callback: `${url}/nocert`,
      Tls: { CaCertificates: pem.ca },
    });
    await fire('/nocert/1');
    const last = await until(
      'the attempt failed',
      () => lastDelivery(hook.Id),
      (x) => x?.LastError != null,
    );
    assert.equal(last?.Status, 'pending', 'it will be retried');
    assert.equal(
      seen.some((s) => s.path === '/nocert'),
      false,
    );
  });

  it('shows the certificate, never the key, and the store file holds no key', async () => {
    const list = await api<{ Id: string; Callback: string; Tls?: Record<string, unknown> }[]>(
      d.url,
      d.token,
      'GET',
      '/hooks',
    );
    const hook = list.body.find((h) => h.Callback.endsWith('/mtls'))!;
    const got = await api<{ Tls: Record<string, unknown> }>(d.url, d.token, 'GET', `/hooks/${hook.Id}`);
    const fp = new X509Certificate(pem.clientCert).fingerprint256;
    assert.deepEqual(got.body.Tls, {
      Certificate: {
        Subject: 'CN=hookd-client',
        Issuer: 'CN=hookd test CA',
        Sha256Fingerprint: fp,
        NotAfter: new Date(new X509Certificate(pem.clientCert).validTo).toISOString(),
      },
      ClientKey: '(set)',
      CaCertificates: ['CN=hookd test CA'],
    });
    const keyLine = pem.clientKey.split('\n')[1]!;
    assert.ok(!got.text.includes('PRIVATE KEY') && !got.text.includes(keyLine));
    assert.ok(!list.text.includes(keyLine));
    let dump = '';
    for (const f of readdirSync(d.dataDir).filter((n) => n.startsWith('hookd.db'))) {
      dump += spawnSync('strings', ['-n', '6', join(d.dataDir, f)], { encoding: 'utf8' }).stdout;
    }
    assert.ok(dump.includes(hook.Id), 'strings reads the store');
    assert.ok(!dump.includes(keyLine.slice(0, 40)), 'the client key is in the store file');
    assert.ok(!dump.includes('BEGIN CERTIFICATE'), 'Tls is sealed as a whole');
  });

  it('refuses bad Tls with 400s naming the field', async () => {
    const post = (Tls: unknown, Callback = `${url}/x`) =>
      api<{ errors: { field: string; message: string }[] }>(d.url, d.token, 'POST', '/hooks', {
        PathPattern: '/bad',
        Methods: ['GET'],
        Callback,
        Tls,
      });
    const cases: [unknown, string | undefined, string, RegExp][] = [
      [
        { ClientCertificate: pem.clientCert, ClientKey: pem.otherKey },
        undefined,
        'Tls.ClientKey',
        /not the private key/,
      ],
      [{ ClientCertificate: pem.clientCert }, undefined, 'Tls.ClientKey', /required with the other/],
      [
        { ClientCertificate: 'nonsense', ClientKey: pem.clientKey },
        undefined,
        'Tls.ClientCertificate',
        /not a PEM certificate/,
      ],
      [{ ClientKey: 'nonsense' }, undefined, 'Tls.ClientKey', /not an unencrypted PEM private key/],
      [{ CaCertificates: pem.ca }, 'http://127.0.0.1:1/x', 'Tls', /https Callbacks only/],
      [{ ClientCert: 'x' }, undefined, 'Tls.ClientCert', /not a field of Tls/],
    ];
    for (const [tls, cb, field, message] of cases) {
      const r = await post(tls, cb);
      assert.equal(r.status, 400, r.text);
      const e = r.body.errors.find((x) => x.field === field);
      assert.ok(e, `${field}: ${r.text}`);
      assert.match(e.message, message);
      assert.ok(!r.text.includes(pem.clientKey.split('\n')[1]!), 'no key in an error');
    }
  });

  it('announces a certificate within 14 days of its end once, and again after a restart; the gauge counts down', async () => {
    const mtls = (await api<{ Id: string; Callback: string }[]>(d.url, d.token, 'GET', '/hooks')).body.find(
      (h) => h.Callback.endsWith('/mtls'),
    )!;
    const fp = new X509Certificate(pem.clientCert).fingerprint256;
    const notAfter = new Date(new X509Certificate(pem.clientCert).validTo);
    const expiring = () =>
      notes.filter((n) => n.type === 'hook.certificate_expiring' && n.data.HookId === mtls.Id);
    await until('the expiry was announced', () => expiring().length > 0);
    assert.deepEqual(expiring()[0]!.data, {
      HookId: mtls.Id,
      Owner: 'admin',
      Callback: mtls.Callback,
      Subject: 'CN=hookd-client',
      Sha256Fingerprint: fp,
      NotAfter: notAfter.toISOString(),
      Expired: false,
    });
    // The hook without a client certificate has nothing to announce nor to count.
    assert.ok(
      notes.every((n) => n.data.HookId === mtls.Id),
      JSON.stringify(notes),
    );
    const left = await counter(d.opsUrl, 'hookd_client_certificate_expiry_seconds', `hook="${mtls.Id}"`);
    assert.ok(left > 0 && left <= (notAfter.getTime() - Date.now()) / 1000 + 60, String(left));
    // Replacing the hook with the same certificate announces nothing new.
    const got = await api<Record<string, unknown>>(d.url, d.token, 'GET', `/hooks/${mtls.Id}`);
    assert.equal(got.status, 200);
    const put = await api(d.url, d.token, 'PUT', `/hooks/${mtls.Id}`, {
      PathPattern: '/mtls/*',
      Methods: ['GET'],
      Type: 1,
      Callback: mtls.Callback,
      Name: 'replaced',
      Tls: { ClientCertificate: pem.clientCert, ClientKey: pem.clientKey, CaCertificates: pem.ca },
    });
    assert.equal(put.status, 200, put.text);
    // A second hook with the same certificate is its own announcement: the replace above is the
    // barrier that shows a repeat would have come by now.
    const twin = await createHook(d, {
      PathPattern: '/twin/*',
      Methods: ['GET'],
      Type: 1,
      Callback: `${url}/twin`,
      Tls: { ClientCertificate: pem.clientCert, ClientKey: pem.clientKey },
    });
    await until('the twin was announced', () => notes.some((n) => n.data.HookId === twin.Id));
    assert.equal(expiring().length, 1, 'announced once per hook and certificate');
    // A restart checks every hook at start-up.
    await d.close();
    d = await startHookd({}, { dataDir: d.dataDir });
    await until('announced again after the restart', () => expiring().length === 2);
  });
});
