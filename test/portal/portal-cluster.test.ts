import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createRelayedTestDatabase, pgSkipReason, type RelayedTestDatabase } from '../helpers/pg-test-db.js';
import { addUser, portalLink } from '../helpers/servers.js';
import type { TcpRelay } from '../helpers/tcp-relay.js';

// Two instances on one PostgreSQL database: a link made on one opens on the other, once; and
// with its database unreachable an instance names the store on the portal's pages.

describe('portal in a PostgreSQL cluster', { timeout: 120_000 }, async () => {
  const skip = await pgSkipReason();
  if (skip) {
    it('needs PostgreSQL', { skip }, () => undefined);
    return;
  }
  let pg: RelayedTestDatabase;
  let relay: TcpRelay;
  let a: TestDaemon;
  let b: TestDaemon;

  before(async () => {
    pg = await createRelayedTestDatabase();
    relay = pg.relay;
    a = await startHookd({ databaseUrl: pg.db.url });
    b = await startHookd({ databaseUrl: pg.viaRelay }, { dataDir: a.dataDir, keepDataDir: true });
    await addUser(a, 'alice');
  });
  after(async () => {
    relay?.restore();
    await b?.close();
    await a?.close();
    await pg?.close();
  });

  it('a link made on one instance opens on another, and only once across both', async () => {
    const link = await portalLink(a, 'alice');
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
    const link = await portalLink(a, 'alice');
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
