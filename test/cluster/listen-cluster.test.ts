import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { api, startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { createHook, type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// `hookctl listen` connected to one instance of a cluster sees the callbacks every instance
// fires, each once: two instances on one PostgreSQL database, a listener on B, requests at both.

const skip = await pgSkipReason();

interface Relayed {
  kind: string;
  DeliveryId: string;
  Trigger: { Path: string };
}

describe('hookctl listen across a cluster', { skip, timeout: 90_000 }, () => {
  let tdb: TestDatabase;
  let dataDir: string;
  let a: TestDaemon;
  let b: TestDaemon;
  let receiver: Receiver;
  let ws: WebSocket | undefined;

  before(async () => {
    tdb = await createTestDatabase();
    dataDir = tempDir('hookd-listen-cluster-');
    receiver = await startReceiver();
    a = await startHookd({ databaseUrl: tdb.url }, { dataDir });
    b = await startHookd({ databaseUrl: tdb.url }, { dataDir });
  });
  after(async () => {
    ws?.terminate();
    await a?.close();
    await b?.close();
    await receiver?.close();
    await tdb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const report = (d: TestDaemon, path: string) =>
    api(d.url, d.token, 'POST', '/_hookd/report', [{ Method: 'GET', Path: path, StatusCode: 200 }]);

  it("relays every instance's callbacks to a listener on one of them, each once", async () => {
    await createHook(a, { PathPattern: '/lc/(*)', Methods: ['GET'], Callback: `${receiver.url}/cb` });
    // B knows the hook (the database announced it) once a report there fires it.
    await until('B has the hook', async () => {
      const r = await api<{ fired?: number }>(b.url, b.token, 'POST', '/_hookd/report', [
        { Method: 'GET', Path: '/lc/warm', StatusCode: 200 },
      ]);
      return (r.body.fired ?? 0) > 0;
    });

    const got: Relayed[] = [];
    ws = new WebSocket(`${b.url.replace('http', 'ws')}/_hookd/listen`, {
      headers: { authorization: `Bearer ${b.token}` },
    });
    const socket = ws;
    socket.on('message', (data) => {
      const m = JSON.parse(String(data)) as Relayed;
      if (m.kind !== 'callback') return;
      got.push(m);
      // Answered as the CLI does: the attempt is recorded on the instance it reached.
      socket.send(
        JSON.stringify({ kind: 'result', DeliveryId: m.DeliveryId, StatusCode: 204, LatencyMs: 1 }),
      );
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('message', () => resolve());
      socket.once('error', reject);
    });

    // A publishes this owner's events once it has learnt that B has a listener for them: probe
    // until one of A's callbacks comes through.
    let probe = 0;
    await until('a callback fired at A reaches the listener on B', async () => {
      await report(a, `/lc/probe-${++probe}`);
      await new Promise((r) => setTimeout(r, 100));
      return got.some((m) => m.Trigger.Path.startsWith('/lc/probe-'));
    });

    const start = got.length;
    const paths: string[] = [];
    for (let i = 1; i <= 5; i++) {
      paths.push(`/lc/a${i}`, `/lc/b${i}`);
      await report(a, `/lc/a${i}`);
      await report(b, `/lc/b${i}`);
    }
    await until('all ten relayed', () => got.length - start >= paths.length);
    // A last one from each: anything relayed twice would come before them.
    await report(a, '/lc/last-a');
    await report(b, '/lc/last-b');
    await until('the last ones relayed', () =>
      ['/lc/last-a', '/lc/last-b'].every((p) => got.some((m) => m.Trigger.Path === p)),
    );
    const seen = got.slice(start).map((m) => m.Trigger.Path);
    assert.deepEqual(
      seen.filter((p) => !p.startsWith('/lc/last-') && !p.startsWith('/lc/probe-')).sort(),
      [...paths].sort(),
      'each callback of both instances once',
    );
    const ids = got.map((m) => m.DeliveryId);
    assert.equal(new Set(ids).size, ids.length, 'no delivery relayed twice');

    // The listener's answer to A's callback is on that delivery, read at either instance.
    const fromA = got.find((m) => m.Trigger.Path === '/lc/a1')!;
    const delivery = await until(
      'the listener attempt on A’s delivery',
      async () =>
        (
          await api<{ AttemptLog?: { Via?: string; StatusCode?: number }[] }>(
            a.url,
            a.token,
            'GET',
            `/_hookd/deliveries/${fromA.DeliveryId}`,
          )
        ).body,
      (d) => (d.AttemptLog ?? []).some((x) => x.Via === 'listener'),
    );
    assert.equal(delivery.AttemptLog!.find((x) => x.Via === 'listener')!.StatusCode, 204);
  });
});
