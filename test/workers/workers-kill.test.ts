import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type HookdProcess, spawnHookd, tempDir } from '../helpers/hookd.js';
import { startUpstream, type Upstream } from '../helpers/servers.js';
import { until as poll } from '../helpers/until.js';
import { childrenOf, getFresh, ownerOfPort } from './worker-procs.js';

// kill -9 of a worker strands no connection (docs/DECISIONS.md "Workers: reload, shutdown, crash
// loop", the stuck connection): a connection is answered, or refused or reset at once, so a
// client's retry is immediate instead of waiting on its own timeout. With the cluster's shared
// socket one GET per kill went unanswered and the primary held it open.

const until = (what: string, check: () => boolean) => poll(what, check, { ms: 60_000, every: 20 });
const KILLS = 6;
const GETS_PER_KILL = 8;
/** Far above a loopback answer, even on a loaded machine; far below "forever". */
const PATIENCE_MS = 4000;

/** Exited (or a zombie not yet reaped by the primary): its sockets are closed. */
function gone(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

type Outcome = { status: number } | { code: string } | { hung: true };

async function outcome(url: string, path: string): Promise<Outcome> {
  try {
    return { status: await getFresh(url, path, PATIENCE_MS) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === undefined ? { hung: true } : { code };
  }
}

describe('--workers 2: a socket per worker', () => {
  let upstream: Upstream;
  let daemon: HookdProcess | undefined;
  const dataDir = tempDir('hookd-workers-kill-');
  /** The port each proxied path came from, as the upstream saw it: which worker proxied it. */
  const fromPort = new Map<string, number>();
  before(async () => {
    upstream = await startUpstream((req, res) => {
      fromPort.set(req.url ?? '', req.socket.remotePort ?? 0);
      res.writeHead(200).end('ok');
    });
  });

  /** Fresh GETs until each worker has proxied one: both listen, so the kill hits a serving worker. */
  let probes = 0;
  const bothServe = async (pid: number) => {
    const workers = childrenOf(pid);
    const seen = new Set<number>();
    for (let tries = 0; seen.size < 2; tries++) {
      assert.ok(tries < 400, 'both workers take connections');
      const path = `/probe/${probes++}`;
      assert.equal(await getFresh(daemon!.url, path, PATIENCE_MS), 200);
      const w = ownerOfPort(workers, fromPort.get(path)!);
      if (w !== undefined) seen.add(w);
    }
  };
  after(async () => {
    await daemon?.stop();
    await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('leaves no connection unanswered: each is served, or refused or reset at once', async () => {
    daemon = await spawnHookd(['--upstream', upstream.url, '--workers', '2'], {
      dataDir,
      timeoutMs: 120_000,
    });
    const pid = daemon.proc.pid!;
    const atKill: Outcome[] = [];
    const afterDeath: Outcome[] = [];
    const burst = (k: number, phase: string) =>
      Promise.all(
        Array.from({ length: GETS_PER_KILL }, (_, i) => outcome(daemon!.url, `/k/${k}/${phase}/${i}`)),
      );
    for (let k = 0; k < KILLS; k++) {
      await bothServe(pid);
      const before = childrenOf(pid);
      assert.equal(before.length, 2, 'two workers before the kill');
      const victim = before[k % 2]!;
      process.kill(victim, 'SIGKILL');
      // Fresh connections at once: some reach the victim's socket before the process is gone.
      atKill.push(...(await burst(k, 'at')));
      // And as soon as it is gone, while the primary may not yet know it.
      await until('the victim to be gone', () => gone(victim));
      afterDeath.push(...(await burst(k, 'after')));
      await until('a replacement worker', () => {
        const now = childrenOf(pid);
        return now.length === 2 && !now.includes(victim);
      });
    }
    const all = [...atKill, ...afterDeath];
    const hung = all.filter((o) => 'hung' in o).length;
    assert.equal(
      hung,
      0,
      `${hung} of ${all.length} GETs neither answered nor refused within ${PATIENCE_MS} ms`,
    );
    // Queued on the victim's socket when it died: reset (the client retries at once), never held.
    for (const o of atKill) {
      if ('status' in o) assert.equal(o.status, 200);
      else if ('code' in o) assert.match(o.code, /^(ECONNRESET|ECONNREFUSED)$/);
    }
    // Once it is gone, its socket is too: the kernel gives every connection to the live worker.
    assert.deepEqual(
      afterDeath.filter((o) => !('status' in o) || o.status !== 200),
      [],
      'every GET after the death served',
    );
  });

  it('a second hookd with workers on the same port is refused (EADDRINUSE), not let into the group', async () => {
    const port = new URL(daemon!.url).port;
    const other = tempDir('hookd-workers-kill-');
    try {
      const second = await spawnHookd(
        ['--upstream', upstream.url, '--workers', '2', '--listen', `127.0.0.1:${port}`],
        { dataDir: other, timeoutMs: 120_000 },
      ).catch((err: Error) => err);
      if (!(second instanceof Error)) {
        await second.stop();
        assert.fail('a second hookd listened on a port in use');
      }
      assert.match(second.message, /exited with 1 before listening: .*EADDRINUSE/s);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
    assert.equal(await getFresh(daemon!.url, '/still', PATIENCE_MS), 200);
  });

  it('on a unix socket the workers share the primary one, and serve', async () => {
    const dir = tempDir('hookd-workers-unix-');
    const path = join(dir, 'hookd.sock');
    const d = await spawnHookd(['--upstream', upstream.url, '--workers', '2', '--listen', `unix:${path}`], {
      dataDir: dir,
      timeoutMs: 120_000,
    });
    try {
      assert.equal(d.url, `unix:${path}`);
      for (let i = 0; i < 4; i++) {
        const status = await new Promise<number>((resolve, reject) => {
          const req = request({ socketPath: path, path: `/u/${i}`, agent: false }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.on('error', reject);
          req.end();
        });
        assert.equal(status, 200);
      }
    } finally {
      await d.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
