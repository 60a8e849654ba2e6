import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { DeliveryPipeline } from '../../src/delivery/pipeline.js';
import { DEFAULT_PLAN, samePlanForAll } from '../../src/delivery/plan/index.js';
import type { FiredEvent } from '../../src/engine/fired-event.js';
import { AddressPolicy } from '../../src/policy/address-policy.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import { api, startHookd } from '../helpers/hookd.js';
import { until } from '../helpers/until.js';
import { cleanEnv, runInProcess } from '../hookctl/helpers.js';

// An unverified hook says why: its callback origin's last handshake, in a few words, on the hook
// (API, hookctl get, the console), from real receivers that refuse, forget the header, or hang.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Behaviour = 'forbid' | 'no-header' | 'hang';

async function receiver(behaviour: Behaviour): Promise<string> {
  const server: Server = createServer((req, res) => {
    req.resume();
    if (req.method !== 'OPTIONS') return void res.writeHead(200).end();
    if (behaviour === 'hang') return;
    res.writeHead(behaviour === 'forbid' ? 403 : 200).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('the last handshake (pipeline, short timeouts)', () => {
  const cases: [Behaviour, string][] = [
    ['forbid', '403 Forbidden'],
    ['no-header', '200 without WebHook-Allowed-Origin'],
    ['hang', 'no answer within 400 ms'],
  ];
  for (const [behaviour, expected] of cases) {
    it(`a receiver that ${behaviour === 'hang' ? 'never answers' : behaviour}: "${expected}", and when the next goes`, async () => {
      const url = await receiver(behaviour);
      const p = new DeliveryPipeline({
        stores: { durable: new MemoryDeliveryStore(), ephemeral: new MemoryDeliveryStore() },
        send: { policy: new AddressPolicy(['127.0.0.0/8']) },
        schedule: { delaysMs: [0], jitter: 0 },
        plans: samePlanForAll({ ...DEFAULT_PLAN, verification: 'cloudevents' }),
        verification: { waitMs: 60_000, timeoutMs: 400, retryMs: 30_000 },
      });
      await p.start();
      cleanups.push(() => p.close(0));
      const origin = new URL(url).origin;
      assert.equal(p.verifier?.lastHandshake(origin), undefined, 'nothing before the first handshake');
      const e: FiredEvent = {
        hookId: `hk_vr_${behaviour}`,
        owner: 'alice',
        hookType: 1,
        persist: false,
        firedAt: new Date().toISOString(),
        trigger: { method: 'GET', path: '/x' },
        request: {
          method: 'POST',
          url: `${url}/cb`,
          headers: { 'content-type': 'application/json' },
          body: '{}',
        },
      };
      p.accept([e]);
      const last = await until('the handshake answered', () => p.verifier?.lastHandshake(origin));
      assert.equal(last.result, expected);
      assert.ok(
        last.nextAt !== undefined && last.nextAt > last.at,
        'a delivery waits: the next one is planned',
      );
    });
  }
});

describe('VerificationResult on the hook (daemon)', () => {
  it('API, hookctl get and the console show the result; the document round-trips through PUT', async () => {
    const forbidding = await receiver('forbid');
    const headerless = await receiver('no-header');
    const d = await startHookd({ callbackVerification: 'cloudevents' });
    cleanups.push(() => d.close());
    const ids: Record<string, string> = {};
    for (const [name, url] of [
      ['forbid', forbidding],
      ['headerless', headerless],
    ] as const) {
      const res = await api<{ Id: string; VerificationResult?: unknown }>(d.url, d.token, 'POST', '/hooks', {
        PathPattern: `/vr/${name}`,
        Methods: ['GET'],
        Callback: `${url}/cb`,
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.VerificationResult, undefined, 'no handshake yet');
      ids[name] = res.body.Id;
      await api(d.url, d.token, 'POST', '/_hookd/report', [
        { Method: 'GET', Path: `/vr/${name}`, StatusCode: 200 },
      ]);
    }
    type Shown = { State: string; VerificationResult?: { At: string; Result: string; NextAt?: string } };
    const shown = (id: string) =>
      until(
        'the handshake result on the hook',
        async () => (await api<Shown>(d.url, d.token, 'GET', `/hooks/${id}`)).body,
        (h) => h.VerificationResult !== undefined,
      );
    const forbid = await shown(ids.forbid!);
    assert.equal(forbid.State, 'unverified');
    assert.equal(forbid.VerificationResult!.Result, '403 Forbidden');
    assert.ok(Date.parse(forbid.VerificationResult!.At) > 0);
    assert.ok(Date.parse(forbid.VerificationResult!.NextAt!) > Date.parse(forbid.VerificationResult!.At));
    const headerlessHook = await shown(ids.headerless!);
    assert.equal(headerlessHook.VerificationResult!.Result, '200 without WebHook-Allowed-Origin');

    const got = await runInProcess(['get', ids.forbid!], {
      env: cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token }),
      tty: false,
    });
    assert.equal(got.code, 0, got.stderr);
    const doc = JSON.parse(got.stdout) as Shown & Record<string, unknown>;
    assert.equal(doc.VerificationResult?.Result, '403 Forbidden');
    const back = await api(d.url, d.token, 'PUT', `/hooks/${ids.forbid}`, doc);
    assert.equal(back.status, 200, `hookctl get output is accepted back: ${back.text}`);

    const form = await fetch(`${d.consoleUrl}/_hookd/console/signin`);
    const pre = form.headers.getSetCookie()[0]!.split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const signed = await fetch(`${d.consoleUrl}/_hookd/console/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, token: d.token }),
    });
    const cookie = signed.headers.getSetCookie()[0]!.split(';')[0]!;
    const page = await (
      await fetch(`${d.consoleUrl}/_hookd/console/hooks/${ids.headerless}`, { headers: { cookie } })
    ).text();
    assert.match(
      page,
      /Last handshake<\/dt><dd class="verification-result">200 without WebHook-Allowed-Origin/,
    );
  });
});
