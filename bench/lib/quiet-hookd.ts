/**
 * A hookd that logs warnings only (a line per callback would be part of what is measured), ready
 * when its hook API answers the admin token that bootstrap wrote. The benches that count hookd's
 * CPU per callback start it this way.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, HOOKD_BIN } from './peers.js';
import { type Running, sleep, start } from './process.js';

export interface QuietHookdOptions {
  dataDir: string;
  databaseUrl?: string;
  upstream?: string;
  /** Write a V8 CPU profile into this directory when hookd exits. */
  profileDir?: string;
  /** Another build's bin/hookd.js (a before/after comparison). */
  bin?: string;
  core?: number;
  extraArgs?: string[];
}

export interface QuietHookd {
  url: string;
  token: string;
  running: Running;
}

/** Tries a port that was free a moment ago this many times before giving up. */
const PORT_TRIES = 5;

export async function startQuietHookd(opts: QuietHookdOptions): Promise<QuietHookd> {
  // A port found free can be taken by another process before hookd binds it (two suites or
  // benches on one machine): then another port, rather than a failed run.
  for (let tries = 1; ; tries++) {
    try {
      return await startOn(await freePort(), opts);
    } catch (err) {
      if (!(err instanceof PortTaken) || tries >= PORT_TRIES) throw err;
    }
  }
}

class PortTaken extends Error {}

async function startOn(port: number, opts: QuietHookdOptions): Promise<QuietHookd> {
  const running = await start(
    process.execPath,
    [
      ...(opts.profileDir ? ['--cpu-prof', '--cpu-prof-dir', opts.profileDir] : []),
      opts.bin ?? HOOKD_BIN,
      ...(opts.databaseUrl ? ['--database-url', opts.databaseUrl] : []),
      ...(opts.upstream ? ['--upstream', opts.upstream] : []),
      '--data-dir',
      opts.dataDir,
      '--listen',
      `127.0.0.1:${port}`,
      '--allow-callback-net',
      '127.0.0.0/8',
      '--log-level',
      'warn',
      ...(opts.extraArgs ?? []),
    ],
    {
      core: opts.core,
      // The operations listener on a free port: its fixed default would collide between instances
      // (a variable, which a hookd without that option ignores).
      env: { ...process.env, HOOKD_OPS_LISTEN: '127.0.0.1:0', HOOKD_CONSOLE_LISTEN: '127.0.0.1:0' },
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    let token = '';
    try {
      token = readFileSync(join(opts.dataDir, 'admin.token'), 'utf8').trim();
    } catch {
      // not written yet
    }
    const ok =
      token !== '' &&
      (await fetch(`${url}/hooks`, { headers: { authorization: `Bearer ${token}` } })
        .then((r) => r.status === 200)
        .catch(() => false));
    if (ok) return { url, token, running };
    if (running.proc.exitCode !== null) {
      const stderr = running.stderr();
      if (stderr.includes('EADDRINUSE')) throw new PortTaken(`port ${port} was taken: ${stderr}`);
      throw new Error(`hookd exited: ${stderr}`);
    }
    if (Date.now() > deadline) {
      await running.stop(1000);
      throw new Error(`hookd not ready within 60 s: ${running.stderr()}`);
    }
    await sleep(50);
  }
}
