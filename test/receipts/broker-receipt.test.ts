import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Channel, type ChannelModel, connect } from 'amqplib';
import type { Page } from 'playwright-core';
import { chromiumSkipReason, launchBrowser, type TestBrowser } from '../console/browser.js';
import { api, onConsoleOrigin, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook } from '../helpers/servers.js';
import { brokerMissing, uniqueName } from '../helpers/transport-kit.js';
import { until } from '../helpers/until.js';
import { cleanEnv, hookctl } from '../hookctl/helpers.js';

// A delivery to a broker has no status code: its receipt ("confirmed by …", as hookctl tail
// shows it) is its outcome wherever one is shown: the API's LastReceipt, hookctl deliveries,
// the console's hook log and its Live page.

const skip = (await brokerMissing('RabbitMQ', 5672)) || chromiumSkipReason();
const ROOT = '/_hookd/console';
const RECEIPT = /confirmed by 127\.0\.0\.1:5672, exchange ts\.events_\w+, routing key ts\.ts1/;

describe('a broker delivery shows its receipt', { skip, timeout: 120_000 }, () => {
  let d: TestDaemon;
  let admin: ChannelModel;
  let ch: Channel;
  let browser: TestBrowser;
  let page: Page;
  let hookId = '';
  const exchange = uniqueName('ts.events');
  const queue = uniqueName('hookd-receipt');

  before(async () => {
    admin = await connect('amqp://guest:guest@127.0.0.1:5672');
    ch = await admin.createChannel();
    await ch.assertExchange(exchange, 'topic', { durable: false });
    // A bound queue: the broker confirms only a message it could route.
    await ch.assertQueue(queue, { durable: false });
    await ch.bindQueue(queue, exchange, 'ts.#');
    d = onConsoleOrigin(await startHookd({ callbackSchemes: ['http', 'https', 'amqp'] }));
    const hook = await createHook(d, {
      PathPattern: '/repositories/*/timeseries/(*)',
      Methods: ['POST'],
      Type: 1,
      Callback: `amqp://guest:guest@127.0.0.1:5672/%2F?exchange=${exchange}&routing_key=ts.$1`,
    });
    hookId = hook.Id;
    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.goto(`${d.url}${ROOT}/`);
    await page.fill('#token', d.token);
    await page.click('button[type=submit]');
    await page.waitForURL(`${d.url}${ROOT}/`);
  });
  after(async () => {
    await browser?.close();
    await d?.close();
    await ch?.deleteQueue(queue).catch(() => undefined);
    await ch?.deleteExchange(exchange).catch(() => undefined);
    await admin?.close();
  });

  it('the Live page, the API, hookctl deliveries and the hook log show "confirmed by …"', async () => {
    await page.goto(`${d.url}${ROOT}/live`);
    await page.waitForSelector('#live-filters[data-connected="true"]');
    const r = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', [
      { Method: 'POST', Path: '/repositories/r1/timeseries/ts1', StatusCode: 200, Phase: 'after' },
    ]);
    assert.equal(r.body.fired, 1, r.text);
    await page.waitForSelector('tr.live-event[data-outcome="succeeded"]', { timeout: 15_000 });
    assert.match((await page.textContent('tr.live-event td.outcome'))!, RECEIPT);

    const list = await until(
      'the delivery succeeded',
      async () =>
        (
          await api<{ Id: string; Status: string; LastReceipt?: string }[]>(
            d.url,
            d.token,
            'GET',
            `/hooks/${hookId}/deliveries`,
          )
        ).body,
      (l) => l[0]?.Status === 'succeeded',
    );
    assert.match(list[0]!.LastReceipt ?? '', RECEIPT);
    const one = await api<{ LastReceipt?: string }>(
      d.url,
      d.token,
      'GET',
      `/_hookd/deliveries/${list[0]!.Id}`,
    );
    assert.match(one.body.LastReceipt ?? '', RECEIPT);

    const env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
    const out = await hookctl(['deliveries', hookId], { env });
    assert.equal(out.code, 0, out.stderr);
    const row = out.stdout.split('\n').find((l) => l.includes(list[0]!.Id.slice(0, 12))) ?? out.stdout;
    assert.match(row, new RegExp(`<-- ${RECEIPT.source}`));
    assert.doesNotMatch(row, /<-- delivered/);

    await page.goto(`${d.url}${ROOT}/hooks/${hookId}`);
    assert.match((await page.textContent('#log tbody tr'))!, RECEIPT);
  });
});
