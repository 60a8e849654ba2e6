/**
 * `hookctl create|replace --client-cert FILE --client-key FILE|- --ca-certs FILE`: the files fill
 * the hook's `Tls` (the key from a file or a pipe, never argv); the daemon shows the certificate,
 * never the key.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeCertificates, skip } from '../helpers/certificates.js';
import { api, startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { cleanEnv, hookctlInProcess as hookctl } from './helpers.js';

describe('hookctl --client-cert, --client-key, --ca-certs', { skip }, () => {
  const dir = tempDir('hookctl-tls-');
  let pem: ReturnType<typeof makeCertificates>;
  let d: TestDaemon;
  let env: NodeJS.ProcessEnv;
  const file = join(dir, 'hook.json');

  before(async () => {
    pem = makeCertificates(dir);
    d = await startHookd();
    env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
    writeFileSync(
      file,
      JSON.stringify({ PathPattern: '/tls/*', Methods: ['GET'], Callback: 'https://127.0.0.1:9/tls' }),
    );
  });
  after(async () => {
    await d?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const tlsOf = async (id: string) =>
    (await api<{ Tls?: Record<string, unknown> }>(d.url, d.token, 'GET', `/hooks/${id}`)).body.Tls;

  it('create fills Tls from the files; replace takes the key from standard input', async () => {
    const made = await hookctl(
      [
        'create',
        '-f',
        file,
        '--client-cert',
        join(dir, 'client.crt'),
        '--client-key',
        join(dir, 'client.key'),
        '--ca-certs',
        join(dir, 'ca.crt'),
      ],
      { env },
    );
    assert.equal(made.code, 0, made.stderr);
    const id = made.stdout.trim();
    const tls = await tlsOf(id);
    assert.equal((tls?.Certificate as { Subject: string } | undefined)?.Subject, 'CN=hookd-client');
    assert.equal(tls?.ClientKey, '(set)');
    assert.deepEqual(tls?.CaCertificates, ['CN=hookd test CA']);
    // The certificate lives 2 days: the server's warning reaches stderr.
    assert.match(made.stderr, /Tls\.ClientCertificate: expires at/);

    // `hookctl get` output (Tls as shown) replaced with a piped key: the shown fields are not sent back.
    const shown = await hookctl(['get', id, '-o', 'json'], { env });
    writeFileSync(join(dir, 'got.json'), shown.stdout);
    const piped = await hookctl(
      [
        'replace',
        id,
        '-f',
        join(dir, 'got.json'),
        '--client-cert',
        join(dir, 'client.crt'),
        '--client-key',
        '-',
      ],
      { env, input: pem.clientKey },
    );
    assert.equal(piped.code, 0, piped.stderr);
    const replaced = await tlsOf(id);
    assert.equal(replaced?.ClientKey, '(set)');
    assert.equal(replaced?.CaCertificates, undefined, 'replaced by what the flags give');
    assert.ok(!shown.stdout.includes(pem.clientKey.split('\n')[1]!), 'hookctl get shows no key');
  });

  it('refuses two readers of standard input, a file that is not PEM, and a key without its certificate (server)', async () => {
    const both = await hookctl(['create', '-f', '-', '--client-key', '-'], { env, input: '{}' });
    assert.equal(both.code, 2, both.stderr);
    assert.match(both.stderr, /-f - and --client-key - all read standard input/);
    const notPem = await hookctl(['create', '-f', file, '--ca-certs', file], { env });
    assert.equal(notPem.code, 2, notPem.stderr);
    assert.match(notPem.stderr, /--ca-certs \S+hook\.json: not a PEM text/);
    const half = await hookctl(['create', '-f', file, '--client-key', join(dir, 'client.key')], { env });
    assert.notEqual(half.code, 0);
    assert.match(half.stderr, /Tls\.ClientCertificate/);
    assert.ok(!half.stderr.includes(pem.clientKey.split('\n')[1]!), 'no key in an error');
  });
});
