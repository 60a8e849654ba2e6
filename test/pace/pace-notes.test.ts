import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { cleanEnv, hookctl } from '../hookctl/helpers.js';

// Why a receiver's concurrency limit is below the maximum, where hookctl deliveries and the
// console's hook page show it: the start-up ramp is said plainly, only a limit the receiver's own
// answers lowered is a warning, and the warning names what it did.

interface Scripted {
  url: string;
  answered: number;
  status: number;
  delayMs: number;
  close(): Promise<void>;
}

async function scripted(): Promise<Scripted> {
  const r: Scripted = { url: '', answered: 0, status: 200, delayMs: 0, close: async () => undefined };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        r.answered++;
        res.writeHead(r.status, { 'retry-after': '1' }).end('ok');
      }, r.delayMs),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  r.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}

describe('receiver pace: ramping up is not a warning, a lowered limit says why', () => {
  let d: TestDaemon;
  let cookie = '';
  const closers: (() => Promise<void>)[] = [];
  const root = () => `${d.consoleUrl}/_hookd/console`;

  before(async () => {
    d = await startHookd({ deliveryPerEndpoint: 8 });
    const signin = await fetch(`${root()}/signin`);
    const pre = signin.headers.getSetCookie()[0]!.split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await signin.text())![1]!;
    const signed = await fetch(`${root()}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, token: d.token }),
    });
    cookie = signed.headers.getSetCookie()[0]!.split(';')[0]!;
  });
  after(async () => {
    for (const c of closers.reverse()) await c();
    await d?.close();
  });

  async function hookTo(prefix: string): Promise<{ id: string; rcv: Scripted }> {
    const rcv = await scripted();
    closers.push(() => rcv.close());
    const hook = await createHook(d, {
      PathPattern: `${prefix}/*`,
      Methods: ['GET'],
      Type: 1,
      Callback: `${rcv.url}/in`,
    });
    return { id: hook.Id, rcv };
  }

  async function fireOne(prefix: string, rcv: Scripted): Promise<void> {
    const seen = rcv.answered;
    const res = await api(d.url, d.token, 'POST', '/_hookd/report', [
      { Method: 'GET', Path: `${prefix}/x`, StatusCode: 200, Phase: 'after' },
    ]);
    assert.equal(res.status, 202, res.text);
    await until('the receiver answered', () => rcv.answered > seen);
  }

  /** What hookctl deliveries says on stderr once the pace shows `want`. */
  async function deliveriesSays(id: string, want: RegExp): Promise<string> {
    const env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
    const out = await until(
      `hookctl deliveries says ${want}`,
      () => hookctl(['deliveries', id], { env }),
      (r) => want.test(r.stderr),
    );
    assert.equal(out.code, 0, out.stderr);
    return out.stderr;
  }

  const page = async (id: string) =>
    /<dd class="receiver-pace">([\s\S]*?)<\/dd>/.exec(
      await (await fetch(`${root()}/hooks/${id}`, { headers: { cookie } })).text(),
    )?.[1] ?? '';

  it('after one fast delivery: "ramping up: 3 of 8", no warning, on the CLI and the page', async () => {
    const { id, rcv } = await hookTo('/ramp');
    await fireOne('/ramp', rcv);
    const err = await deliveriesSays(id, /ramping up/);
    assert.match(err, new RegExp(`^receiver ${rcv.url}: ramping up: 3 of 8$`, 'm'));
    assert.doesNotMatch(err, /warning|lowered|slowly/);
    const shown = await page(id);
    assert.match(
      shown,
      /class="pace-limit">3<\/span> of 8 attempts at once <span class="pace-note hint">\(ramping up\)/,
    );
    assert.doesNotMatch(shown, /lowered|warn/);
  });

  it('after 429: a warning naming the answer, on the CLI and the page', async () => {
    const { id, rcv } = await hookTo('/busy');
    rcv.status = 429;
    await fireOne('/busy', rcv);
    // The attempt runner hands the answer's code to the pace (PaceSample.answerCode).
    const cause = '429 Too Many Requests';
    const err = await deliveriesSays(id, /lowered/);
    assert.match(
      err,
      new RegExp(`^warning: receiver ${rcv.url}: concurrency limit 1 of 8: lowered after ${cause}$`, 'm'),
    );
    assert.match(await page(id), new RegExp(`<span class="pace-note warn">lowered after ${cause}</span>`));
    const res = await fetch(`${d.url}/hooks/${id}/deliveries`, {
      headers: { authorization: `Bearer ${d.token}` },
    });
    assert.match(
      res.headers.get('hookd-receiver-concurrency') ?? '',
      /; state=lowered; after\*=UTF-8''(429|overload)%20/,
    );
  });

  it('after answers far above the first ones: a warning naming the baseline', async () => {
    const { id, rcv } = await hookTo('/slow');
    for (let i = 0; i < 3; i++) await fireOne('/slow', rcv);
    rcv.delayMs = 400;
    await fireOne('/slow', rcv);
    const err = await deliveriesSays(id, /lowered/);
    assert.match(
      err,
      new RegExp(
        `^warning: receiver ${rcv.url}: concurrency limit \\d of 8: lowered after answers (above 2× its [\\d.]+ ms baseline|more than 5 ms above its [\\d.]+ ms baseline)$`,
        'm',
      ),
    );
    assert.match(await page(id), /<span class="pace-note warn">lowered after answers /);
  });
});
