/**
 * Secrets at rest through real hookd processes: the key file made 0600 on first start, the SQLite
 * file holding no secret, the secret API unchanged, `hookd secrets rotate-key` beside the running
 * daemon and across a restart, and a missing or wrong key file refused at start naming the file.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { api, assertBuilt, HOOKD_BIN, type HookdProcess, spawnHookd, tempDir } from '../helpers/hookd.js';
import { createHook, type Receiver, startReceiver } from '../helpers/servers.js';

assertBuilt();

function dumpOf(dir: string): string {
  let out = '';
  for (const f of readdirSync(dir).filter((n) => n.startsWith('hookd.db'))) {
    out += spawnSync('strings', ['-n', '6', join(dir, f)], { encoding: 'utf8' }).stdout;
  }
  return out;
}

/** `hookd ARGS…` to its end. */
function hookdCommand(args: string[]) {
  return spawnSync(process.execPath, [HOOKD_BIN, ...args], { encoding: 'utf8' });
}

/** A start that must fail: its exit code and what it said. */
function failedStart(dataDir: string, extra: string[] = []) {
  return spawnSync(
    process.execPath,
    [
      HOOKD_BIN,
      '--data-dir',
      dataDir,
      '--listen',
      '127.0.0.1:0',
      '--ops-listen',
      '127.0.0.1:0',
      '--console-listen',
      '127.0.0.1:0',
      ...extra,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
}

describe('signing secrets at rest in a running hookd', {
  skip:
    spawnSync('strings', ['--version']).status !== 0 && process.env.HOOKD_REQUIRE_ALL !== '1'
      ? 'strings (binutils) is not installed'
      : undefined,
}, () => {
  const dataDir = tempDir('hookd-secrets-e2e-');
  let d: HookdProcess;
  let rcv: Receiver;
  let hookId = '';
  let secret = '';

  before(async () => {
    rcv = await startReceiver();
    d = await spawnHookd([], { dataDir });
  });
  after(async () => {
    await d?.stop();
    await rcv?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const report = async (n: number) => {
    const r = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', [
      { Method: 'GET', Path: `/orders/${n}`, StatusCode: 200, Phase: 'after' },
    ]);
    assert.equal(r.body.fired, 1, r.text);
    const calls = await rcv.waitFor(n);
    return calls[n - 1]!;
  };
  const verify = (s: string, call: Awaited<ReturnType<typeof report>>) =>
    new Webhook(s).verify(call.body, call.headers as Record<string, string>);

  it('creates the key file 0600 beside admin.token, signs with the secret the API shows', async () => {
    assert.equal(statSync(join(dataDir, 'secrets.key')).mode & 0o777, 0o600);
    const hook = await createHook(d, {
      PathPattern: '/orders/*',
      Methods: ['GET'],
      Type: 1,
      Callback: `${rcv.url}/cb`,
    });
    hookId = hook.Id;
    const shown = await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${hookId}/secret`);
    secret = shown.body.Secret;
    assert.match(secret, /^whsec_/);
    verify(secret, await report(1));
  });

  it('rotate-key beside the running daemon: the API and signatures keep working, then a rotation', async () => {
    const r = hookdCommand(['secrets', 'rotate-key', '--data-dir', dataDir]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /new key k[0-9a-f]{16}; re-encrypted [1-9]\d* stored secret/);
    const shown = await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${hookId}/secret`);
    assert.equal(shown.body.Secret, secret);
    verify(secret, await report(2));
    const rotated = await api<{ Secret: string }>(d.url, d.token, 'POST', `/hooks/${hookId}/secret/rotate`);
    assert.equal(rotated.status, 200, rotated.text);
    const fresh = rotated.body.Secret;
    const call = await report(3);
    verify(fresh, call);
    verify(secret, call);
    secret = fresh;
  });

  it('after a restart the store file holds no secret and every secret still reads', async () => {
    assert.equal(await d.stop(), 0);
    const dump = dumpOf(dataDir);
    assert.ok(dump.includes(hookId), 'strings reads the store');
    assert.ok(!dump.includes(secret.slice(6)), 'the current secret is in the file');
    assert.ok(!dump.includes('whsec_'), 'a secret is in the file');
    d = await spawnHookd([], { dataDir });
    const shown = await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${hookId}/secret`);
    assert.equal(shown.body.Secret, secret);
    verify(secret, await report(4));
  });

  it('a missing key file, or another one, stops the start with an error naming the file', async () => {
    assert.equal(await d.stop(), 0);
    const keyFile = join(dataDir, 'secrets.key');
    renameSync(keyFile, `${keyFile}.saved`);
    const missing = failedStart(dataDir);
    assert.equal(missing.status, 2, missing.stderr);
    assert.ok(missing.stderr.includes(keyFile), missing.stderr);
    assert.match(missing.stderr, /does not exist, but the store holds secrets sealed with key/);
    const otherDir = tempDir('hookd-secrets-other-');
    try {
      const other = join(otherDir, 'other.key');
      // A key file of another daemon: made by its first start on an empty data dir.
      const made = await spawnHookd(['--secrets-key-file', other], { dataDir: otherDir });
      await made.stop();
      const wrong = failedStart(dataDir, ['--secrets-key-file', other]);
      assert.equal(wrong.status, 2, wrong.stderr);
      assert.ok(wrong.stderr.includes(other), wrong.stderr);
      assert.match(wrong.stderr, /a wrong or an older key file/);
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
    renameSync(`${keyFile}.saved`, keyFile);
    d = await spawnHookd([], { dataDir });
    const shown = await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${hookId}/secret`);
    assert.equal(shown.body.Secret, secret);
  });
});
