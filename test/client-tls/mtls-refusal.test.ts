/**
 * A receiver that requires a client certificate and closes the connection at the handshake: the
 * delivery's error says it may require one and whether one was presented, for a TLS 1.3 server
 * (the close comes right after the handshake, `other side closed`) and a TLS 1.2 one (the
 * handshake fails with an alert). A connection closed with nothing read over plain HTTP is not
 * named so.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeCertificates, skip } from '../helpers/certificates.js';
import { api, startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { createHook } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

const NONE =
  /the connection closed during or right after the TLS handshake: the receiver may require a client certificate, and none was presented/;

describe('a receiver that requires a client certificate closes the connection', { skip }, () => {
  const dir = tempDir('hookd-mtls-refusal-');
  let pem: ReturnType<typeof makeCertificates>;
  const servers: NetServer[] = [];
  let d: TestDaemon;

  const listen = async (s: NetServer, scheme: string): Promise<string> => {
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return `${scheme}://127.0.0.1:${(s.address() as AddressInfo).port}`;
  };
  const requiring = (maxVersion?: 'TLSv1.2'): Server =>
    createServer(
      {
        key: pem.serverKey,
        cert: pem.serverCert,
        ca: pem.ca,
        requestCert: true,
        rejectUnauthorized: true,
        ...(maxVersion && { maxVersion }),
      },
      (_req, res) => res.writeHead(204).end(),
    );

  before(async () => {
    pem = makeCertificates(dir);
    d = await startHookd();
  });
  after(async () => {
    await d?.close();
    for (const s of servers) await new Promise<void>((r) => s.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  let n = 0;
  /** The first attempt's error of a hook to `callback` with `tls`. */
  async function firstError(callback: string, tls?: Record<string, string>): Promise<string> {
    const prefix = `/r${++n}`;
    const hook = await createHook(d, {
      PathPattern: `${prefix}/*`,
      Methods: ['GET'],
      Type: 1,
      Callback: `${callback}/in`,
      ...(tls && { Tls: tls }),
    });
    const r = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', [
      { Method: 'GET', Path: `${prefix}/x`, StatusCode: 200, Phase: 'after' },
    ]);
    assert.equal(r.body.fired, 1, r.text);
    const last = await until(
      'the attempt failed',
      async () =>
        (
          await api<{ LastError: string | null }[]>(
            d.url,
            d.token,
            'GET',
            `/hooks/${hook.Id}/deliveries?limit=1`,
          )
        ).body[0],
      (x) => x?.LastError != null,
    );
    return last!.LastError!;
  }

  it('TLS 1.3, only CaCertificates: "other side closed", and none was presented', async () => {
    const err = await firstError(await listen(requiring(), 'https'), { CaCertificates: pem.ca });
    assert.match(err, /UND_ERR_SOCKET|ECONNRESET|ALERT/);
    assert.match(err, NONE);
  });

  it('TLS 1.2, only CaCertificates: the handshake fails, and none was presented', async () => {
    const err = await firstError(await listen(requiring('TLSv1.2'), 'https'), { CaCertificates: pem.ca });
    assert.match(err, NONE);
  });

  it('a certificate the receiver does not trust: it names the one presented', async () => {
    const run = (args: string[]) => {
      const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    };
    run(
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'].concat([
        '-keyout',
        'stranger.key',
        '-out',
        'stranger.crt',
        '-days',
        '2',
        '-subj',
        '/CN=stranger',
      ]),
    );
    const err = await firstError(await listen(requiring(), 'https'), {
      CaCertificates: pem.ca,
      ClientCertificate: readFileSync(join(dir, 'stranger.crt'), 'utf8'),
      ClientKey: readFileSync(join(dir, 'stranger.key'), 'utf8'),
    });
    assert.match(err, /the receiver may not accept the client certificate presented \(CN=stranger\)/);
  });

  it('plain HTTP closed with nothing answered is not named a certificate refusal', async () => {
    const closing = createHttpServer((req) => req.socket.destroy());
    const err = await firstError(await listen(closing, 'http'));
    assert.match(err, /other side closed|ECONNRESET|socket hang up/);
    assert.doesNotMatch(err, /certificate/);
  });
});
