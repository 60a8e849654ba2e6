/**
 * The operator's client certificate (`--callback-client-cert`, `--callback-client-key`): a real
 * hookd process presents it on an https callback of a hook without `Tls` of its own, to a real
 * HTTPS server that requires client certificates; a bad file stops start-up with exit 2, named.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { makeCertificates, skip } from '../helpers/certificates.js';
import { api, HOOKD_BIN, type HookdProcess, spawnHookd, tempDir } from '../helpers/hookd.js';
import { until } from '../helpers/until.js';

describe("the operator's client certificate", { skip }, () => {
  const dir = tempDir('hookd-operator-tls-');
  let pem: ReturnType<typeof makeCertificates>;
  let server: Server;
  let url = '';
  const seen: { path: string; clientCN: string | undefined }[] = [];
  let d: HookdProcess | undefined;

  before(async () => {
    pem = makeCertificates(dir);
    writeFileSync(join(dir, 'other-client.key'), pem.otherKey);
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
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await d?.stop();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('is presented on https callbacks of hooks without Tls of their own', async () => {
    d = await spawnHookd(
      ['--callback-client-cert', join(dir, 'client.crt'), '--callback-client-key', join(dir, 'client.key')],
      // The receiver's CA is trusted through Node's extra CAs: the hooks name none.
      { env: { NODE_EXTRA_CA_CERTS: join(dir, 'ca.crt') } },
    );
    const created = await api<{ Id: string }>(d.url, d.token, 'POST', '/hooks', {
      PathPattern: '/op/*',
      Methods: ['GET'],
      Type: 1,
      Callback: `${url}/op`,
    });
    assert.equal(created.status, 201, created.text);
    const fired = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', [
      { Method: 'GET', Path: '/op/1', StatusCode: 200, Phase: 'after' },
    ]);
    assert.equal(fired.body.fired, 1, fired.text);
    const got = await until('the receiver got the callback', () => seen.find((s) => s.path === '/op'));
    assert.equal(got.clientCN, 'hookd-client');
  });

  it('a missing or mismatched file stops start-up with exit 2, naming the file, without a stack', () => {
    const start = (cert: string, key: string) =>
      spawnSync(
        process.execPath,
        [
          HOOKD_BIN,
          '--data-dir',
          join(dir, 'data-bad'),
          '--listen',
          '127.0.0.1:0',
          '--ops-listen',
          '127.0.0.1:0',
          '--callback-client-cert',
          cert,
          '--callback-client-key',
          key,
        ],
        { encoding: 'utf8', timeout: 30_000 },
      );
    const missing = start(join(dir, 'nope.crt'), join(dir, 'client.key'));
    assert.equal(missing.status, 2, missing.stderr);
    assert.match(missing.stderr, /callbackClientCert \S*nope\.crt: cannot be read \(ENOENT\)/);
    const mismatched = start(join(dir, 'client.crt'), join(dir, 'other-client.key'));
    assert.equal(mismatched.status, 2, mismatched.stderr);
    assert.match(mismatched.stderr, /callbackClientKey \S*other-client\.key: is not the private key/);
    const notCert = start(join(dir, 'client.key'), join(dir, 'client.key'));
    assert.equal(notCert.status, 2, notCert.stderr);
    assert.match(notCert.stderr, /callbackClientCert \S*client\.key: is not a PEM certificate/);
    for (const r of [missing, mismatched, notCert]) {
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack');
      assert.ok(!r.stderr.includes(pem.clientKey.split('\n')[1]!), 'no key text');
    }
    const half = spawnSync(
      process.execPath,
      [HOOKD_BIN, '--data-dir', join(dir, 'data-bad'), '--callback-client-cert', join(dir, 'client.crt')],
      { encoding: 'utf8', timeout: 30_000 },
    );
    assert.equal(half.status, 2, half.stderr);
    assert.match(half.stderr, /callback-client-cert: needs callbackClientKey/);
  });
});
