/**
 * The console's hook form edits `Tls` (mutual TLS): the certificates as text areas, the key a
 * write-only field never filled in; an edit that leaves the key empty keeps the stored one.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { makeCertificates, skip } from '../helpers/certificates.js';
import { api, startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';

const ROOT = '/_hookd/console';

interface TlsView {
  Certificate?: { Subject: string };
  ClientKey?: string;
  CaCertificates?: string[];
}

describe('the console hook form and Tls', { skip }, () => {
  const dir = tempDir('hookd-console-tls-');
  let pem: ReturnType<typeof makeCertificates>;
  let d: TestDaemon;
  let cookie = '';
  let csrf = '';

  before(async () => {
    pem = makeCertificates(dir);
    d = await startHookd();
    const signin = await fetch(`${d.consoleUrl}${ROOT}/signin`);
    const pre = signin.headers.getSetCookie()[0]!.split(';')[0]!;
    const csrf0 = /name="_csrf" value="([^"]+)"/.exec(await signin.text())![1]!;
    const signed = await fetch(`${d.consoleUrl}${ROOT}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf0, token: d.token }),
    });
    cookie = signed.headers.getSetCookie()[0]!.split(';')[0]!;
    const page = await (await fetch(`${d.consoleUrl}${ROOT}/`, { headers: { cookie } })).text();
    csrf = /name="csrf-token" content="([^"]+)"/.exec(page)![1]!;
  });
  after(async () => {
    await d?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const keyLine = () => pem.clientKey.split('\n')[1]!;
  const crlf = (t: string) => t.replaceAll('\n', '\r\n');
  const submit = (path: string, fields: Record<string, string>) =>
    fetch(`${d.consoleUrl}${ROOT}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        _csrf: csrf,
        PathPattern: '/tls/*',
        Methods: 'GET',
        Type: '1',
        Callback: 'https://127.0.0.1:9/tls',
        CallbackMethod: 'POST',
        ...fields,
      }),
    });
  const tlsOf = async (id: string) =>
    (await api<{ Tls?: TlsView; Name?: string }>(d.url, d.token, 'GET', `/hooks/${id}`)).body;

  it('creates with a certificate and key from the form; the edit form never holds the key, and an empty key keeps it', async () => {
    const made = await submit('/hooks', {
      TlsClientCertificate: crlf(pem.clientCert),
      TlsClientKey: crlf(pem.clientKey),
      TlsCaCertificates: crlf(pem.ca),
    });
    assert.equal(made.status, 303, await made.text());
    const id = /\/hooks\/([^/]+)$/.exec(made.headers.get('location') ?? '')![1]!;
    const created = await tlsOf(id);
    assert.equal(created.Tls?.Certificate?.Subject, 'CN=hookd-client');
    assert.equal(created.Tls?.ClientKey, '(set)');
    assert.deepEqual(created.Tls?.CaCertificates, ['CN=hookd test CA']);

    const edit = await (
      await fetch(`${d.consoleUrl}${ROOT}/hooks/${id}/edit`, { headers: { cookie } })
    ).text();
    assert.ok(!edit.includes(keyLine()) && !edit.includes('PRIVATE KEY-----\n'), 'no key in the edit form');
    assert.match(
      edit,
      /<textarea id="f-TlsClientKey" name="TlsClientKey"[^>]*placeholder="\(set\): leave empty to keep it"[^>]*><\/textarea>/,
    );
    assert.ok(edit.includes(pem.clientCert.split('\n')[1]!), 'the certificate is shown');
    assert.match(edit, /name="_tlsKeySet" value="yes"/);

    // The form as it stands, the key left empty: the stored key is kept.
    const saved = await submit(`/hooks/${id}`, {
      Name: 'edited',
      TlsClientCertificate: crlf(pem.clientCert),
      TlsClientKey: '',
      TlsCaCertificates: crlf(pem.ca),
      _tlsKeySet: 'yes',
    });
    assert.equal(saved.status, 303, await saved.text());
    const kept = await tlsOf(id);
    assert.equal(kept.Name, 'edited');
    assert.equal(kept.Tls?.ClientKey, '(set)');
    assert.equal(kept.Tls?.Certificate?.Subject, 'CN=hookd-client');

    // Emptied fields remove Tls.
    const cleared = await submit(`/hooks/${id}`, { Name: 'edited', _tlsKeySet: 'yes' });
    assert.equal(cleared.status, 303, await cleared.text());
    assert.equal((await tlsOf(id)).Tls, undefined);
  });

  it('a bad key is a 400 beside the Tls fields, without the key in the page', async () => {
    const bad = await submit('/hooks', {
      TlsClientCertificate: pem.clientCert,
      TlsClientKey: pem.otherKey,
    });
    assert.equal(bad.status, 400);
    const page = await bad.text();
    assert.match(page, /id="err-Tls"[^>]*>[^<]*ClientKey is not the private key/);
    assert.ok(!page.includes(pem.otherKey.split('\n')[1]!), 'the key typed is not sent back');
  });
});
