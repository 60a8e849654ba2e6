import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HookdClient, HookdError } from '../../src/client/index.js';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createRelayedTestDatabase, pgSkipReason, type RelayedTestDatabase } from '../helpers/pg-test-db.js';
import { sleep } from '../helpers/servers.js';
import type { TcpRelay } from '../helpers/tcp-relay.js';

// hookd/client through a store outage: hookd on PostgreSQL behind a TCP relay the test owns and
// cuts. An idempotent call rides it out on 503 STORE_UNAVAILABLE + Retry-After within the bound
// the caller set; a create, which is not idempotent, fails at once with the typed error.

describe('hookd/client across a PostgreSQL outage', { timeout: 120_000 }, async () => {
  const skip = await pgSkipReason();
  if (skip) {
    it('needs PostgreSQL', { skip }, () => undefined);
    return;
  }
  let pg: RelayedTestDatabase;
  let relay: TcpRelay;
  let d: TestDaemon;
  let client: HookdClient;

  before(async () => {
    pg = await createRelayedTestDatabase();
    relay = pg.relay;
    d = await startHookd({ databaseUrl: pg.viaRelay });
    client = new HookdClient({ baseUrl: d.url, token: d.token, retryUnavailableMs: 30_000 });
  });
  after(async () => {
    relay?.restore();
    await client?.close();
    await d?.close();
    await pg?.close();
  });

  it('a replace waits the outage out; a create fails with 503 STORE_UNAVAILABLE and Retry-After', async () => {
    const h = await client.hooks.create({
      PathPattern: '/outage',
      Methods: ['GET'],
      Callback: 'http://127.0.0.1:9/cb',
    });
    relay.cut();
    let created: unknown;
    try {
      await client.hooks.create({
        PathPattern: '/outage/2',
        Methods: ['GET'],
        Callback: 'http://127.0.0.1:9/cb',
      });
    } catch (e) {
      created = e;
    }
    assert.ok(created instanceof HookdError, `a HookdError, not ${String(created)}`);
    assert.deepEqual([created.status, created.code], [503, 'STORE_UNAVAILABLE']);
    assert.ok((created.retryAfterSeconds ?? 0) >= 1, 'Retry-After');
    const started = Date.now();
    const replacing = client.hooks.replace(h.Id, {
      PathPattern: '/outage',
      Methods: ['POST'],
      Callback: 'http://127.0.0.1:9/cb',
    });
    await sleep(2500);
    relay.restore();
    const replaced = await replacing;
    assert.deepEqual(replaced.Methods, ['POST']);
    assert.ok(Date.now() - started >= 2500, 'it waited for the store');
    assert.deepEqual((await client.hooks.get(h.Id)).Methods, ['POST']);
  });
});
