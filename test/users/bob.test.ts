import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { api, type HookdProcess, spawnHookd, tempDir } from '../helpers/hookd.js';
import {
  firedCalls,
  fireMark,
  type Receiver,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';

const BOB_HOOK = { PathPattern: '/', Methods: ['*'], CallbackContent: '{"uri":"$REQUEST_URI"}' };
const ALICE_URL = '/repositories/alice-private/timeseries/salary?api_key=ALICE-SECRET';

/**
 * The issue's own example: bob, a plain user, asks for every request of everybody. Refused at
 * create when his scopes are paths; accepted with `own` but then nothing of another client's
 * reaches him; and `$REQUEST_URI` never carries the secret, not even to the admin.
 */
describe("bob's catch-all hook", { timeout: 120_000 }, () => {
  let d: HookdProcess;
  let upstream: Upstream;
  let receiver: Receiver;
  const token = new Map<string, string>();

  before(async () => {
    upstream = await startUpstream();
    receiver = await startReceiver();
    d = await spawnHookd(
      ['--upstream', upstream.url, '--identity-header', 'X-Forwarded-User', '--trusted-proxy', '127.0.0.1'],
      {
        timeoutMs: 30_000,
      },
    );
    for (const [name, scopes] of [
      ['bob', ['/repositories/bob']],
      ['bobby', ['own']],
    ] as const) {
      assert.equal(
        (await api(d.url, d.token, 'POST', '/_hookd/users', { Name: name, Scopes: scopes })).status,
        201,
      );
      const t = await api<{ Token: string }>(d.url, d.token, 'POST', `/_hookd/users/${name}/tokens`, {});
      token.set(name, t.body.Token);
    }
  });
  after(async () => {
    await d?.stop();
    await receiver?.close();
    await upstream?.close();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('is refused at create for a user whose scopes are paths, naming PathPattern, the rule and the scopes', async () => {
    const r = await api<{ detail: string }>(d.url, token.get('bob')!, 'POST', '/hooks', {
      ...BOB_HOOK,
      Callback: `${receiver.url}/bob`,
    });
    assert.equal(r.status, 400, r.text);
    assert.match(r.body.detail, /PathPattern/);
    assert.match(r.body.detail, /\/repositories\/bob/);
    assert.match(r.body.detail, /scope/);
  });

  it("with own, it is accepted but receives nothing of alice's or an anonymous request; only its owner's own", async () => {
    const r = await api(d.url, token.get('bobby')!, 'POST', '/hooks', {
      ...BOB_HOOK,
      Callback: `${receiver.url}/bobby`,
    });
    assert.equal(r.status, 201, r.text);
    const admin = await api(d.url, d.token, 'POST', '/hooks', {
      ...BOB_HOOK,
      Callback: `${receiver.url}/admin`,
    });
    assert.equal(admin.status, 201, admin.text);
    receiver.reset();
    let mark = await fireMark(d.opsUrl, receiver);
    for (const headers of [{ 'X-Forwarded-User': 'alice' }, {}] as Record<string, string>[]) {
      const res = await fetch(`${d.url}${ALICE_URL}`, { headers });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    // The admin's catch-all sees both (it is there to show that the requests did fire hooks).
    await receiver.waitFor(2, 10_000);
    const seen = await firedCalls(d.opsUrl, receiver, mark);
    assert.deepEqual(
      seen.map((c) => c.url),
      ['/admin', '/admin'],
    );
    for (const c of seen) {
      assert.ok(!c.body.includes('ALICE-SECRET'), c.body);
      assert.match(c.body, /api_key=REDACTED/);
    }
    // bobby's own request reaches bobby's hook (and the admin's).
    receiver.reset();
    mark = await fireMark(d.opsUrl, receiver);
    const own = await fetch(`${d.url}/bobby/things?token=T0P`, { headers: { 'X-Forwarded-User': 'bobby' } });
    await own.arrayBuffer();
    await receiver.waitFor(2, 10_000);
    const mine = (await firedCalls(d.opsUrl, receiver, mark))
      .map((c) => ({ url: c.url, uri: (JSON.parse(c.body) as { uri: string }).uri }))
      .sort((a, b) => a.url.localeCompare(b.url));
    assert.deepEqual(
      mine.map((c) => c.url),
      ['/admin', '/bobby'],
    );
    assert.match(mine[1]!.uri, /\/bobby\/things\?token=REDACTED$/);
  });

  it('the report API and the dry run follow the same rule', async () => {
    receiver.reset();
    const served = { Method: 'GET', Path: ALICE_URL, StatusCode: 200, User: 'alice' };
    // A plain user's report is its own; naming alice is refused.
    const forged = await api(d.url, token.get('bobby')!, 'POST', '/_hookd/report', served);
    assert.equal(forged.status, 403, forged.text);
    const report = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', served);
    assert.equal(report.status, 202, report.text);
    assert.equal(
      report.body.fired,
      1,
      "only the admin's hook: bobby's own-scoped one is not alice's request",
    );
    const dry = await api<unknown[]>(d.url, token.get('bobby')!, 'POST', '/_hookd/match', {
      Method: 'GET',
      Path: ALICE_URL,
    });
    assert.deepEqual(dry.body, []);
    const dryOwn = await api<{ Request: { Body: string } }[]>(
      d.url,
      token.get('bobby')!,
      'POST',
      '/_hookd/match',
      {
        Method: 'GET',
        Path: ALICE_URL,
        User: 'bobby',
      },
    );
    assert.equal(dryOwn.body.length, 1);
    assert.ok(!dryOwn.body[0]!.Request.Body.includes('ALICE-SECRET'), dryOwn.body[0]!.Request.Body);
    const calls = await receiver.waitFor(1, 10_000);
    assert.equal(calls[0]!.url, '/admin');
    assert.ok(!calls[0]!.body.includes('ALICE-SECRET'));
  });

  it('stored deliveries carry the redacted URI only', async () => {
    const hooks = await api<{ Id: string }[]>(d.url, d.token, 'GET', '/hooks');
    const deliveries = await api<unknown[]>(d.url, d.token, 'GET', `/hooks/${hooks.body[0]!.Id}/deliveries`);
    assert.equal(deliveries.status, 200);
    assert.ok(deliveries.body.length >= 3);
    assert.ok(!deliveries.text.includes('ALICE-SECRET'), deliveries.text.slice(0, 500));
    assert.ok(deliveries.text.includes('REDACTED'));
  });
});

describe('--redact-query-params', { timeout: 60_000 }, () => {
  it('a configured list replaces the default; "" turns redaction off', async () => {
    const upstream = await startUpstream();
    const receiver = await startReceiver();
    for (const [flag, expected] of [
      ['session', '?session=REDACTED&api_key=K'],
      ['', '?session=S&api_key=K'],
    ] as const) {
      const d = await spawnHookd(['--upstream', upstream.url, '--redact-query-params', flag], {
        timeoutMs: 30_000,
      });
      try {
        const r = await api(d.url, d.token, 'POST', '/hooks', {
          PathPattern: '/x',
          Methods: ['GET'],
          Callback: `${receiver.url}/cb`,
          CallbackContent: '$REQUEST_URI',
        });
        assert.equal(r.status, 201, r.text);
        receiver.reset();
        await (await fetch(`${d.url}/x?session=S&api_key=K`)).arrayBuffer();
        const [call] = await receiver.waitFor(1, 10_000);
        assert.ok(call!.body.endsWith(expected), `${flag}: ${call!.body}`);
      } finally {
        await d.stop();
        rmSync(d.dataDir, { recursive: true, force: true });
      }
    }
    await receiver.close();
    await upstream.close();
  });
});

describe('existing data dir: users from before scopes', { timeout: 60_000 }, () => {
  it('get ["own"] (admin ["/"]) at start-up, in one log line naming the users whose hooks now fire less', async () => {
    const dataDir = tempDir('hookd-migrate-');
    try {
      // A data dir as an older hookd left it: users without scopes, bob with a hook, carol without.
      const first = await spawnHookd([], { dataDir, timeoutMs: 30_000 });
      for (const name of ['bob', 'carol'])
        assert.equal(
          (await api(first.url, first.token, 'POST', '/_hookd/users', { Name: name, Scopes: ['/'] })).status,
          201,
        );
      const t = await api<{ Token: string }>(first.url, first.token, 'POST', '/_hookd/users/bob/tokens', {});
      const hook = { PathPattern: '/a', Methods: ['GET'], Callback: 'http://127.0.0.1:9/cb' };
      assert.equal((await api(first.url, t.body.Token, 'POST', '/hooks', hook)).status, 201);
      await first.stop();
      const db = new Database(join(dataDir, 'hookd.db'));
      db.exec('UPDATE users SET scopes = NULL');
      db.close();

      const second = await spawnHookd([], { dataDir, timeoutMs: 30_000 });
      try {
        const line = second.lines
          .map((l) => JSON.parse(l) as { msg: string; users?: string[] })
          .find((l) => l.msg.startsWith('scopes:'));
        assert.ok(line, second.lines.join('\n'));
        assert.deepEqual(line.users, ['bob']);
        assert.match(line.msg, /bob now fire only for their own requests/);
        const users = await api<{ Name: string; Scopes: string[] }[]>(
          second.url,
          second.token,
          'GET',
          '/_hookd/users',
        );
        assert.deepEqual(
          users.body.map((u) => [u.Name, u.Scopes]),
          [
            ['admin', ['/']],
            ['bob', ['own']],
            ['carol', ['own']],
          ],
        );
        const fired = await api<{ fired: number }>(second.url, second.token, 'POST', '/_hookd/report', {
          Method: 'GET',
          Path: '/a',
        });
        assert.equal(fired.body.fired, 0, "bob's hook no longer fires for a request that is not his");
      } finally {
        await second.stop();
      }
      // A third start has nothing to migrate: no line.
      const third = await spawnHookd([], { dataDir, timeoutMs: 30_000 });
      await third.stop();
      assert.ok(!third.lines.some((l) => l.includes('"scopes:')));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
