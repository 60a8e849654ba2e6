import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { addUser } from '../helpers/servers.js';
import { startTcpRelay, type TcpRelay } from '../helpers/tcp-relay.js';

// Two instances on one PostgreSQL database: a link made on one opens on the other, once; and
// with its database unreachable an instance names the store on the portal's pages.

describe('portal in a PostgreSQL cluster', { timeout: 120_000 }, async () => {
  const skip = await pgSkipReason();
  if (skip) {
    it('needs PostgreSQL', { skip }, () => undefined);
    return;
  }
  let tdb: TestDatabase;
  let relay: TcpRelay;
  let a: TestDaemon;
  let b: TestDaemon;

  before(async () => {
    tdb = await createTestDatabase();
    const u = new URL(tdb.url);
    relay = await startTcpRelay(u.hostname, Number(u.port || 5432));
    const viaRelay = new URL(tdb.url);
    viaRelay.hostname = relay.host;
    viaRelay.port = String(relay.port);
    a = await startHookd({ databaseUrl: tdb.url });
    b = await startHookd({ databaseUrl: viaRelay.toString() }, { dataDir: a.dataDir, keepDataDir: true });
    await addUser(a, 'alice');
  });
  after(async () => {
    relay?.restore();
    await b?.close();
    await a?.close();
    await relay?.close();
    await tdb?.drop();
  });

  it('a link made on one instance opens on another, and only once across both', async () => {
    const link = await api<{ Url: string }>(a.url, a.token, 'POST', '/_hookd/portal-links', {
      User: 'alice',
    });
    assert.equal(link.status, 201, link.text);
    const onB = link.body.Url.replace(a.consoleUrl, b.consoleUrl);
    const first = await fetch(onB, { redirect: 'manual' });
    assert.equal(first.status, 303);
    assert.equal(
      (await fetch(link.body.Url, { redirect: 'manual' })).status,
      410,
      'used, on the other instance too',
    );
    assert.equal((await fetch(onB, { redirect: 'manual' })).status, 410);
  });

  it('names the store when it is unreachable, instead of an internal error', async () => {
    const link = await api<{ Url: string }>(a.url, a.token, 'POST', '/_hookd/portal-links', {
      User: 'alice',
    });
    relay.cut();
    try {
      const res = await fetch(link.body.Url.replace(a.consoleUrl, b.consoleUrl), { redirect: 'manual' });
      const text = await res.text();
      assert.equal(res.status, 503, text);
      assert.match(text, /store is unavailable/);
    } finally {
      relay.restore();
    }
  });
});
