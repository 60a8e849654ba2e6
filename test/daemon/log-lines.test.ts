import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type HookdProcess, spawnHookd } from '../helpers/hookd.js';
import { createHook, type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// What the log says at info (the default level): a delivery attempt without an error carries no
// `err` key (the pretty log printed `err: null` under every one), and the console's static assets
// are logged at debug, not one info line per stylesheet and script.

let hookd: HookdProcess;
let receiver: Receiver;
before(async () => {
  receiver = await startReceiver();
  hookd = await spawnHookd(['--log-format', 'json']);
});
after(async () => {
  await hookd.stop();
  await receiver.close();
});

const records = () =>
  hookd.lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('log lines at info', () => {
  it('a delivered attempt has no err key', async () => {
    const hook = await createHook(
      { url: hookd.url, token: hookd.token },
      { PathPattern: '/logged', Methods: ['GET'], Callback: `${receiver.url}/ok` },
    );
    const res = await fetch(`${hookd.url}/_hookd/report`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hookd.token}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ Method: 'GET', Path: '/logged', StatusCode: 200, Phase: 'after' }]),
    });
    assert.equal(res.status, 202, await res.text());
    const line = await until(
      'the attempt is logged',
      () => records().find((r) => r.msg === 'delivery attempt' && r.hookId === hook.Id),
      (r) => r !== undefined,
    );
    assert.equal(line!.outcome, 'succeeded');
    assert.equal('err' in line!, false, JSON.stringify(line));
  });

  it("the console's assets are not logged at info; its pages are", async () => {
    // The console's own listener, from the start-up line.
    const consoleUrl = String(records().find((r) => r.msg === 'listening')?.consoleUrl);
    const base = `${consoleUrl.replace(/\/+$/, '')}/_hookd/console`;
    for (const name of ['console.css', 'console.js'])
      assert.equal((await fetch(`${base}/assets/${name}`)).status, 200);
    // A request logged after them: once its line is there, theirs would be too.
    await fetch(`${base}/signin`);
    await until(
      'the sign-in page is logged',
      () => records().some((r) => r.msg === 'api request' && String(r.path).endsWith('/console/signin')),
      (seen) => seen,
    );
    const assetLines = records().filter(
      (r) => r.msg === 'api request' && String(r.path).includes('/assets/'),
    );
    assert.deepEqual(assetLines, []);
  });
});
