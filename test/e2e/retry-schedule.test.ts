import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load-config.js';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook, type Receiver, sleep, startReceiver } from '../helpers/servers.js';

interface Delivery {
  Id: string;
  Status: string;
  Attempts: number;
  AttemptLog?: { Time: string }[];
}

/** Polls a hook's only delivery until it is no longer pending. */
async function finished(d: TestDaemon, hookId: string, timeoutMs = 5000): Promise<Delivery> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const list = await api<Delivery[]>(d.url, d.token, 'GET', `/hooks/${hookId}/deliveries`);
    const first = list.body[0];
    if (first && first.Status !== 'pending') {
      return (await api<Delivery>(d.url, d.token, 'GET', `/_hookd/deliveries/${first.Id}`)).body;
    }
    if (Date.now() > end) throw new Error(`delivery still pending: ${JSON.stringify(list.body)}`);
    await sleep(50);
  }
}

const fire = (d: TestDaemon, path: string) =>
  api(d.url, d.token, 'POST', '/_hookd/report', {
    Method: 'GET',
    Path: path,
    StatusCode: 200,
    Phase: 'after',
  });

describe('retry schedules', () => {
  let failing: Receiver;
  before(async () => {
    failing = await startReceiver({ status: 500 });
  });
  after(async () => failing.close());

  it("a hook's RetrySchedule sets its attempts and spacing, and is returned as stored", async () => {
    const d = await startHookd();
    try {
      const hook = await createHook(d, {
        PathPattern: '/own/(*)',
        Methods: ['GET'],
        Callback: `${failing.url}/own`,
        RetrySchedule: [0, 0.3, 0.3],
      });
      assert.deepEqual(hook.RetrySchedule, [0, 0.3, 0.3]);
      await fire(d, '/own/a');
      const delivery = await finished(d, hook.Id);
      assert.equal(delivery.Status, 'failed');
      assert.equal(delivery.Attempts, 3, 'three entries, three attempts, then the dead letter');
      const times = delivery.AttemptLog!.map((a) => Date.parse(a.Time));
      assert.ok(times[1]! - times[0]! >= 250, `second attempt ${times[1]! - times[0]!} ms after the first`);
    } finally {
      await d.close();
    }
  });

  it("the daemon's retrySchedule applies to hooks without their own", async () => {
    const d = await startHookd({ retrySchedule: [0, 0.2] });
    try {
      const hook = await createHook(d, {
        PathPattern: '/daemon/(*)',
        Methods: ['GET'],
        Callback: `${failing.url}/d`,
      });
      assert.equal(hook.RetrySchedule, undefined, 'no schedule of its own');
      await fire(d, '/daemon/a');
      const delivery = await finished(d, hook.Id);
      assert.equal(delivery.Status, 'failed');
      assert.equal(delivery.Attempts, 2);
    } finally {
      await d.close();
    }
  });

  it('refuses a bad RetrySchedule naming the field and the rule', async () => {
    const d = await startHookd();
    try {
      const base = { PathPattern: '/x', Methods: ['GET'], Callback: `${failing.url}/x` };
      for (const [value, rule] of [
        [[], /at least/],
        [[0, -1], /seconds from 0/],
        [[0, 8 * 86400], /seconds from 0/],
        ['5m', /array/],
        [Array.from({ length: 21 }, () => 1), /at most 20/],
      ] as const) {
        const r = await api<{ errors: { field: string; message: string }[] }>(
          d.url,
          d.token,
          'POST',
          '/hooks',
          {
            ...base,
            RetrySchedule: value,
          },
        );
        assert.equal(r.status, 400, JSON.stringify(value));
        assert.ok(
          r.body.errors.some((e) => e.field.startsWith('RetrySchedule') && rule.test(e.message)),
          JSON.stringify(r.body.errors),
        );
      }
    } finally {
      await d.close();
    }
  });
});

describe('--retry-schedule', () => {
  it('reads seconds and durations from a flag, the environment or the file', () => {
    const cfg = loadConfig({ env: { HOOKD_RETRY_SCHEDULE: '0, 5s, 5m, 2h, 1d, 1.5' } });
    assert.deepEqual(cfg.retrySchedule, [0, 5, 300, 7200, 86400, 1.5]);
    assert.equal(loadConfig({ env: {} }).retrySchedule, undefined, 'absent: the Standard Webhooks default');
  });

  it('names the key and the bad entry', () => {
    assert.throws(() => loadConfig({ env: { HOOKD_RETRY_SCHEDULE: '0,5x' } }), /HOOKD_RETRY_SCHEDULE.*"5x"/);
    assert.throws(() => loadConfig({ env: { HOOKD_RETRY_SCHEDULE: '0,8d' } }), /at most 7d/);
  });
});
