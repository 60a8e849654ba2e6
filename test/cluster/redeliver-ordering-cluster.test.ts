/**
 * Two hookd instances on one PostgreSQL database: a redelivery asked of the instance that does
 * not hold a pending delivery leaves it to its holder (never sent twice), and a key's deliveries
 * stay in order when the instance holding the key's first delivery dies mid-attempt.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { api, tempDir } from '../helpers/hookd.js';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../helpers/pg-test-db.js';
import { until } from '../helpers/until.js';
import { assertBuilt, type Instance, startInstances } from './cluster-helpers.js';

const skip = await pgSkipReason();

interface Arrival {
  body: string;
  id: string;
  /** Answered (true) or left hanging by the receiver. */
  answered: boolean;
}

describe('cluster: redelivery and ordering across instances', { skip, timeout: 180_000 }, () => {
  let tdb: TestDatabase;
  let dataDir: string;
  let server: Server;
  let url = '';
  let token = '';
  const arrivals: Arrival[] = [];
  /** Bodies answered 500 (once each) and bodies left hanging (their first time). */
  const failOnce = new Set<string>();
  const hangOnce = new Set<string>();
  const hanging: ServerResponse[] = [];
  let a: Instance;
  let b: Instance;

  before(async () => {
    assertBuilt();
    tdb = await createTestDatabase();
    dataDir = tempDir('hookd-redeliver-cluster-');
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        body += c;
      });
      req.on('end', () => {
        const id = String(req.headers['webhook-id']);
        if (hangOnce.delete(body)) {
          arrivals.push({ body, id, answered: false });
          hanging.push(res);
          return;
        }
        arrivals.push({ body, id, answered: true });
        res.writeHead(failOnce.delete(body) ? 500 : 200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    [a, b] = await startInstances(
      ['A', { databaseUrl: tdb.url, dataDir, leaseMs: 2000 }],
      ['B', { databaseUrl: tdb.url, dataDir, leaseMs: 2000 }],
    );
    token = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
  });
  after(async () => {
    for (const i of [a, b]) await i?.kill();
    for (const r of hanging) r.destroy();
    server?.closeAllConnections();
    server?.close();
    await tdb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const hookOn = async (path: string, extra: Record<string, unknown>) => {
    const r = await api<{ Id: string }>(a.url, token, 'POST', '/hooks', {
      PathPattern: `/${path}/(*)/(*)`,
      Methods: ['GET'],
      Callback: `${url}/${path}`,
      CallbackContent: '$1-$2',
      CallbackContentMediaType: 'text/plain',
      ...extra,
    });
    assert.equal(r.status, 201, r.text);
    // Changes travel by NOTIFY: B knows the hook before anything fires there.
    await until(`the hook on B`, async () => {
      const m = await api<unknown[]>(b.url, token, 'POST', '/_hookd/match', {
        Method: 'GET',
        Path: `/${path}/x/0`,
        StatusCode: 200,
      });
      return m.body.length === 1;
    });
    return r.body.Id;
  };
  const fire = async (on: Instance, path: string) => {
    const r = await api<{ fired: number }>(on.url, token, 'POST', '/_hookd/report', [
      { Method: 'GET', Path: path, StatusCode: 200, Phase: 'after' },
    ]);
    assert.equal(r.body.fired, 1, r.text);
  };
  const of = (body: string) => arrivals.filter((x) => x.body === body);

  it('a pending delivery held by A, redelivered through B, keeps its schedule on A and is not sent twice', async () => {
    await hookOn('re', { RetrySchedule: [0, 3600] });
    failOnce.add('k-1');
    await fire(a, '/re/k/1');
    await until('the first attempt (500)', () => of('k-1').length === 1);
    const id = of('k-1')[0]!.id;
    await until(
      'the delivery pending on A',
      async () =>
        (await api<{ Status: string; Attempts: number }>(b.url, token, 'GET', `/_hookd/deliveries/${id}`))
          .body,
      (v) => v.Status === 'pending' && v.Attempts === 1,
    );
    const r = await api(b.url, token, 'POST', `/_hookd/deliveries/${id}/redeliver`);
    assert.equal(r.status, 202, r.text);
    // Markers fired on both instances after the redelivery: once both arrived, B has had every
    // chance to send k-1 too.
    await fire(b, '/re/k/2');
    await fire(a, '/re/k/3');
    await until('the markers', () => of('k-2').length === 1 && of('k-3').length === 1);
    assert.equal(of('k-1').length, 1, 'B did not send the delivery A holds');
    // Asked of its holder, it is brought forward: sent once more, and only once.
    const own = await api(a.url, token, 'POST', `/_hookd/deliveries/${id}/redeliver`);
    assert.equal(own.status, 202, own.text);
    await until('the redelivery by A', () => of('k-1').length === 2);
    await until(
      'succeeded',
      async () => (await api<{ Status: string }>(a.url, token, 'GET', `/_hookd/deliveries/${id}`)).body,
      (v) => v.Status === 'succeeded',
    );
    await fire(b, '/re/k/4');
    await until('another marker', () => of('k-4').length === 1);
    assert.equal(of('k-1').length, 2, 'sent twice in all: the first attempt and the redelivery');
  });

  it("when the instance holding a key's first delivery dies mid-attempt, the next waits for it", async () => {
    const hookId = await hookOn('ord', { Ordering: { Key: '$1' }, RetrySchedule: [0, 1, 1] });
    // A-1 goes out from A and hangs at the receiver; A-2, fired on B, must wait behind it.
    hangOnce.add('A-1');
    await fire(a, '/ord/A/1');
    await until('A-1 in flight from A', () => of('A-1').length === 1);
    await fire(b, '/ord/A/2');
    await until(
      "A-2 held behind A-1's head (on B: pending on another instance)",
      async () =>
        (
          await api<{ HeldBy?: string; Trigger: { Path: string } }[]>(
            b.url,
            token,
            'GET',
            `/hooks/${hookId}/deliveries`,
          )
        ).body,
      (l) =>
        Array.isArray(l) && l.some((x) => x.Trigger.Path === '/ord/A/2' && /^order\b/.test(x.HeldBy ?? '')),
    );
    await a.kill();
    // B takes A-1 over once A's lease runs out, sends it, and only then A-2.
    await until('A-1 and A-2 delivered', () => of('A-2').some((x) => x.answered), 60_000);
    const order = arrivals
      .filter((x) => x.body.startsWith('A-'))
      .map((x) => `${x.body}${x.answered ? '' : ' (hung)'}`);
    assert.deepEqual(order, ['A-1 (hung)', 'A-1', 'A-2'], 'A-2 only after A-1 was delivered');
    assert.equal(of('A-1')[0]!.id, of('A-1')[1]!.id, 'the same delivery, taken over');
  });
});
