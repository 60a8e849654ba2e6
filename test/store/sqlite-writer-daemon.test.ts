import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { api, type HookdProcess, spawnHookd } from '../helpers/hookd.js';
import { createHook, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

/** The names of a process's threads (/proc/PID/task/N/comm, cut at 15 characters by Linux). */
const threadsOf = (pid: number): string[] =>
  readdirSync(`/proc/${pid}/task`).map((t) => readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim());

// The daemon's SQLite writes go to the writer thread when it has delivery threads, and stay on its
// event loop with none; either way a callback reported before a kill -9 is delivered after it.
describe('the SQLite writer thread in the daemon', () => {
  for (const threads of ['1', '0']) {
    it(`--delivery-threads ${threads}: ${threads === '0' ? 'no writer thread' : 'writes on the writer thread'}, nothing lost on kill -9`, async () => {
      let up = false;
      const rcv = await startReceiver({ reply: () => (up ? { status: 200 } : { status: 503 }) });
      const env = { HOOKD_DELIVERY_THREADS: threads };
      const first = await spawnHookd([], { env });
      let second: HookdProcess | undefined;
      try {
        const writer = threadsOf(first.proc.pid!).filter((n) => n === 'hookd sqlite wr');
        assert.equal(writer.length, threads === '0' ? 0 : 1, threadsOf(first.proc.pid!).join(', '));
        const hook = await createHook(first, {
          PathPattern: '/w/(*)',
          Methods: ['GET'],
          Callback: `${rcv.url}/w`,
          Persist: true,
          RetrySchedule: [0, 2, 2, 2],
        });
        const fired = Array.from({ length: 20 }, (_, i) => ({
          Method: 'GET',
          Path: `/w/${i}`,
          StatusCode: 200,
        }));
        const r = await api<{ fired: number }>(first.url, first.token, 'POST', '/_hookd/report', fired);
        assert.equal(r.status, 202, r.text);
        // Acknowledged means recorded: the kill comes with the first refusal, most still unsent.
        await until('a first attempt refused', () => rcv.calls.length >= 1);
        await first.kill();
        const before = rcv.calls.length;
        up = true;
        second = await spawnHookd([], { env, dataDir: first.dataDir });
        const s = second;
        await until(
          'every delivery succeeded after the restart',
          async () =>
            (await api<{ Status: string }[]>(s.url, s.token, 'GET', `/hooks/${hook.Id}/deliveries?limit=100`))
              .body,
          (l) => l.length === 20 && l.every((d) => d.Status === 'succeeded'),
          30_000,
        );
        assert.ok(rcv.calls.length >= before + 20, `${before} refused before the kill, 20 answered after`);
      } finally {
        if (second) await second.stop();
        else await first.kill();
        rmSync(first.dataDir, { recursive: true, force: true });
        await rcv.close();
      }
    });
  }
});
