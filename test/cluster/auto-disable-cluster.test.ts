import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { Hook } from '../../src/hook/hook.js';
import { api, HOOKD_BIN, tempDir } from '../helpers/hookd.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { assertBuilt, type Instance, startInstances } from './cluster-helpers.js';

// Auto-disable and notifications on a cluster: two hookd processes on one PostgreSQL database.
// The notification endpoint is registered through instance A; the hook fails through instance B,
// which disables it and notifies through the endpoint (read from the shared store, signed with
// the shared secret); A sees the hook disabled, and re-enabling it through A reaches B.

const skip = await pgSkipReason();

describe('auto-disable and notifications on a cluster (PostgreSQL)', { skip }, () => {
  let tdb: TestDatabase;
  let dataDir: string;
  let a: Instance;
  let b: Instance;
  let alice: string;
  let rcv: Receiver;
  const env = { HOOKD_AUTO_DISABLE_AFTER: '0.3', HOOKD_AUTO_DISABLE_FAILURES: '3' };

  const run = (...args: string[]): Promise<string> =>
    new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [HOOKD_BIN, ...args, '--data-dir', tempDir('hookd-admin-'), '--database-url', tdb.url],
        { timeout: 60_000 },
        (error, stdout, stderr) => (error ? reject(new Error(stderr)) : resolve(stdout.trim())),
      );
    });

  before(async () => {
    assertBuilt();
    tdb = await createTestDatabase();
    dataDir = tempDir('hookd-cluster-ad-');
    rcv = await startReceiver({
      reply: (c) => ({ status: c.url.startsWith('/hook') ? 500 : 200, body: 'x' }),
    });
    [a, b] = await startInstances(
      ['A', { databaseUrl: tdb.url, dataDir, env }],
      ['B', { databaseUrl: tdb.url, dataDir, env }],
    );
    assert.ok(readFileSync(join(dataDir, 'admin.token'), 'utf8').trim());
    // Scopes: alice's hooks observe every path (a new user's default, own, sees only her requests).
    await run('user', 'add', 'alice', '--scope', '/');
    alice = await run('token', 'create', 'alice');
  });

  after(async () => {
    await a?.kill();
    await b?.kill();
    await rcv?.close();
    await tdb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('an endpoint added on A gets hook.disabled, signed, once, when the hook fails on B; A sees it disabled; enabling on A reaches B', async () => {
    const created = await api<{ Id: string; Secret: string }>(a.url, alice, 'POST', '/_hookd/notifications', {
      Url: `${rcv.url}/alice`,
    });
    assert.equal(created.status, 201, created.text);
    // B reads the endpoint list from the database (every 2 s in a cluster).
    const onB = await api<{ Id: string }[]>(b.url, alice, 'GET', '/_hookd/notifications');
    if (!onB.body.some((e) => e.Id === created.body.Id)) {
      await until(
        'B knows the endpoint',
        async () =>
          (await api<{ Id: string }[]>(b.url, alice, 'GET', '/_hookd/notifications')).body.some(
            (e) => e.Id === created.body.Id,
          ),
        5000,
      );
    }
    const hook = await api<Hook>(b.url, alice, 'POST', '/hooks', {
      PathPattern: '/cluster/fail',
      Methods: ['GET'],
      Callback: `${rcv.url}/hook`,
      RetrySchedule: [0, 0.15, 0.15, 0.15, 0.15, 0.15],
    });
    assert.equal(hook.status, 201, hook.text);
    const rep = await api(b.url, alice, 'POST', '/_hookd/report', {
      Method: 'GET',
      Path: '/cluster/fail',
      StatusCode: 200,
    });
    assert.equal(rep.status, 202, rep.text);

    await until(
      'A sees the hook disabled',
      async () => (await api<Hook>(a.url, alice, 'GET', `/hooks/${hook.body.Id}`)).body.State === 'disabled',
      15_000,
    );
    await until('hook.disabled arrives', () => rcv.calls.some((c) => c.url === '/alice'), 15_000);
    // Once: proved by the delivery logs rather than a wait. No delivery of the hook is under way
    // (so no attempt can disable it again), and none of the endpoint's notifications is pending.
    await until(
      'no delivery of the hook pending',
      async () =>
        (await api<unknown[]>(a.url, alice, 'GET', `/hooks/${hook.body.Id}/deliveries?status=pending`)).body,
      (l) => Array.isArray(l) && l.length === 0,
      15_000,
    );
    await until(
      'the notifications to /alice sent',
      async () =>
        (
          await api<{ Status: string }[]>(
            a.url,
            alice,
            'GET',
            `/_hookd/notifications/${created.body.Id}/deliveries`,
          )
        ).body,
      (l) => Array.isArray(l) && l.every((x) => x.Status !== 'pending'),
      15_000,
    );
    const notes = rcv.calls
      .filter((c) => c.url === '/alice')
      .map(
        (c) =>
          new Webhook(created.body.Secret).verify(c.body, {
            'webhook-id': c.headers['webhook-id'] as string,
            'webhook-timestamp': c.headers['webhook-timestamp'] as string,
            'webhook-signature': c.headers['webhook-signature'] as string,
          }) as { type: string; data: { HookId: string; Cause: string } },
      );
    const disabled = notes.filter((n) => n.type === 'hook.disabled');
    assert.equal(disabled.length, 1, JSON.stringify(notes));
    assert.equal(disabled[0]!.data.HookId, hook.body.Id);
    assert.equal(disabled[0]!.data.Cause, 'failing');

    const enabled = await api<Hook>(a.url, alice, 'POST', `/hooks/${hook.body.Id}/enable`);
    assert.equal(enabled.status, 200, enabled.text);
    await until(
      'B sees it active again',
      async () => (await api<Hook>(b.url, alice, 'GET', `/hooks/${hook.body.Id}`)).body.State === 'active',
      5000,
    );
  });
});
