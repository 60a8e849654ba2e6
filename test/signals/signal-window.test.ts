import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { spawnHookd } from '../helpers/hookd.js';
import { startUpstream } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// Ctrl-C under `npm start`: the terminal sends SIGINT to npm and hookd together and npm forwards
// its own, so hookd sees two at once. A repeat of the same signal within the window is the same
// request (src/signals/, docs/DECISIONS.md "Signal window"): the drain happens, an in-flight
// request is answered, and hookd exits 0. Another signal during the drain still exits at once.

/** An upstream that holds every request until `release`. */
async function heldUpstream() {
  const held: ServerResponse[] = [];
  const upstream = await startUpstream((_req, res) => {
    held.push(res);
  });
  return {
    upstream,
    held,
    release: () => {
      for (const res of held.splice(0)) res.end('done');
    },
  };
}

describe('the stop signal twice', () => {
  it('SIGINT twice at once (Ctrl-C under npm start): one drain, the in-flight request answered, exit 0, the repeat noted only at debug', async () => {
    const up = await heldUpstream();
    const hookd = await spawnHookd(['--upstream', up.upstream.url, '--shutdown-timeout', '30000'], {
      env: { HOOKD_LOG_LEVEL: 'debug' },
    });
    try {
      const inFlight = fetch(`${hookd.url}/slow`).then(async (r) => ({
        status: r.status,
        body: await r.text(),
      }));
      await until(
        'the upstream holds the request',
        () => up.held.length,
        (n) => n === 1,
      );
      // Two at once (the kernel may merge them into one), then npm's forwarded copy a moment
      // after the first was handled: each repeat within the window is the same request.
      hookd.proc.kill('SIGINT');
      hookd.proc.kill('SIGINT');
      await until(
        'the drain began',
        () => hookd.lines.some((l) => l.includes('stopping: finishing')),
        (seen) => seen,
      );
      hookd.proc.kill('SIGINT');
      const said = await until(
        'the repeat is answered',
        () => hookd.lines.find((l) => /the same signal again|second signal/.test(l)),
        (l) => l !== undefined,
      );
      assert.match(said!, /the same signal again: already draining/);
      // One Ctrl-C is one request: its echo is not reported at info.
      for (const l of hookd.lines.filter((x) => x.includes('the same signal again'))) {
        assert.equal((JSON.parse(l) as { level: string }).level, 'debug', l);
      }
      up.release();
      assert.deepEqual(await inFlight, { status: 200, body: 'done' });
      const { code } = await hookd.exited;
      assert.equal(code, 0, hookd.stderr());
      const log = hookd.lines.join('\n');
      assert.match(log, /stopping: finishing in-flight requests/);
      assert.doesNotMatch(log, /second signal: exiting now/);
      assert.equal(hookd.lines.filter((l) => l.includes('stopping: finishing')).length, 1);
    } finally {
      up.release();
      if (hookd.proc.exitCode === null) await hookd.kill();
      await up.upstream.close();
    }
  });

  it('another signal during the drain (SIGINT, then SIGTERM) exits at once', async () => {
    const up = await heldUpstream();
    const hookd = await spawnHookd(['--upstream', up.upstream.url, '--shutdown-timeout', '30000']);
    try {
      void fetch(`${hookd.url}/slow`).catch(() => undefined);
      await until(
        'the upstream holds the request',
        () => up.held.length,
        (n) => n === 1,
      );
      hookd.proc.kill('SIGINT');
      await until(
        'the drain began',
        () => hookd.lines.some((l) => l.includes('stopping: finishing')),
        (seen) => seen,
      );
      hookd.proc.kill('SIGTERM');
      const { code } = await hookd.exited;
      assert.equal(code, 1);
      assert.match(hookd.lines.join('\n'), /second signal: exiting now/);
    } finally {
      up.release();
      if (hookd.proc.exitCode === null) await hookd.kill();
      await up.upstream.close();
    }
  });
});
