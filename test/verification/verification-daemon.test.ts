import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { until } from '../helpers/until.js';

// Endpoint verification end to end in the daemon (its own wiring: the per-hook mode, the rate a
// verified origin allows, the state the API shows): deliveries wait for the CloudEvents handshake
// with `HeldBy` saying so; the origin agreeing releases them; `WebHook-Allowed-Rate` becomes the
// limit of hooks without their own `RateLimit`, while a hook's own `RateLimit` wins.

interface Seen {
  method: string;
  path: string;
}

interface View {
  Id: string;
  Status: string;
  HeldBy?: string;
  AttemptLog?: { RateLimitWaitMs?: number }[];
}

describe('endpoint verification in the daemon', () => {
  let d: TestDaemon;
  let server: Server;
  let url = '';
  const seen: Seen[] = [];
  /** Handshakes are held until the test lets the origin agree. */
  let agree = false;
  const held: { res: ServerResponse; origin: string }[] = [];
  const answer = (res: ServerResponse, origin: string) => {
    if (res.destroyed) return;
    res.writeHead(200, { 'WebHook-Allowed-Origin': origin, 'WebHook-Allowed-Rate': '60' }).end();
  };

  before(async () => {
    server = createServer((req, res) => {
      seen.push({ method: req.method ?? '', path: req.url ?? '' });
      req.resume();
      if (req.method !== 'OPTIONS') return void res.writeHead(200).end();
      const origin = String(req.headers['webhook-request-origin']);
      if (agree) answer(res, origin);
      else held.push({ res, origin });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    d = await startHookd({ callbackVerification: 'cloudevents' });
  });
  after(async () => {
    await d?.close();
    server?.closeAllConnections();
    server?.close();
  });

  const create = async (path: string, extra: Record<string, unknown> = {}) => {
    const r = await api<{ Id: string; State: string }>(d.url, d.token, 'POST', '/hooks', {
      PathPattern: `/${path}/*`,
      Methods: ['GET'],
      Callback: `${url}/${path}`,
      ...extra,
    });
    assert.equal(r.status, 201, r.text);
    return r.body;
  };
  const fire = async (path: string, n: number) => {
    const items = Array.from({ length: n }, (_, i) => ({
      Method: 'GET',
      Path: `/${path}/${i}`,
      StatusCode: 200,
    }));
    const r = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', items);
    assert.equal(r.body.fired, n, r.text);
  };
  const deliveries = async (hookId: string) =>
    (await api<View[]>(d.url, d.token, 'GET', `/hooks/${hookId}/deliveries`)).body;
  const detail = async (id: string) =>
    (await api<View>(d.url, d.token, 'GET', `/_hookd/deliveries/${id}`)).body;
  const posts = (path: string) => seen.filter((s) => s.method === 'POST' && s.path === `/${path}`).length;

  it('deliveries wait for the handshake (HeldBy), the origin agreeing releases them; the allowed rate limits a hook without its own, a hook’s own RateLimit wins', {
    timeout: 120_000,
  }, async () => {
    const plain = await create('plain');
    const own = await create('own', { RateLimit: { PerSecond: 100, Burst: 10 } });
    assert.equal(plain.State, 'unverified');
    await fire('plain', 3);
    await fire('own', 3);
    await until('the handshake asked', () => held.length > 0);
    // Waiting: pending, held by the verification of the origin, nothing sent.
    const waiting = await until(
      'the deliveries held by the verification',
      () => deliveries(plain.Id),
      (l) =>
        l.length === 3 && l.every((x) => x.Status === 'pending' && /^verification of /.test(x.HeldBy ?? '')),
    );
    assert.match(waiting[0]!.HeldBy!, /CloudEvents handshake/);
    assert.equal(posts('plain') + posts('own'), 0, 'nothing is sent before the origin agrees');

    agree = true;
    for (const h of held.splice(0)) answer(h.res, h.origin);
    await until('every delivery sent', () => posts('plain') === 3 && posts('own') === 3, 60_000);
    assert.equal(
      (await api<{ State: string }>(d.url, d.token, 'GET', `/hooks/${plain.Id}`)).body.State,
      'active',
      'verified: the hook shows active',
    );
    const waits = async (hookId: string) => {
      const list = await until(
        'the deliveries ended',
        () => deliveries(hookId),
        (l) => l.every((x) => x.Status === 'succeeded'),
      );
      const details = await Promise.all(list.map((x) => detail(x.Id)));
      return details.flatMap((x) => x.AttemptLog ?? []).filter((a) => (a.RateLimitWaitMs ?? 0) > 0).length;
    };
    // 60 a minute, one at a time: two of the three waited for the allowed rate.
    assert.ok((await waits(plain.Id)) >= 1, 'the allowed rate held attempts of the hook without its own');
    assert.equal(
      await waits(own.Id),
      0,
      "the hook's own RateLimit (100/s) is its limit, not the allowed rate",
    );
  });
});
