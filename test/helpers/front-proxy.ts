import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { skipReason } from './require.js';

/**
 * A proxy program (nginx, Caddy) for tests that put it in front of hookd: found on PATH or at
 * one of `paths`; when missing and running as root with apt-get, `apt-get install -y <pkg>`
 * installs it (as bench/setup.ts does); otherwise `skip` says why, for `describe(..., { skip })`
 * (or, with HOOKD_REQUIRE_ALL=1, it throws: test/helpers/require.ts).
 */
export function findProgram(name: string, paths: string[], pkg: string): { bin?: string; skip?: string } {
  const look = (): string | undefined => {
    const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    const onPath = r.status === 0 ? r.stdout.trim() : '';
    if (onPath) return onPath;
    return paths.find((p) => existsSync(p));
  };
  let bin = look();
  if (bin) return { bin };
  if (process.getuid?.() !== 0 || spawnSync('sh', ['-c', 'command -v apt-get']).status !== 0) {
    return { skip: skipReason(`${name} is not installed (install it with: sudo apt-get install -y ${pkg})`) };
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['install', '-y', pkg], { stdio: 'ignore', env }).status;
  if (install() !== 0) {
    spawnSync('apt-get', ['update'], { stdio: 'ignore', env });
    install();
  }
  bin = look();
  return bin ? { bin } : { skip: skipReason(`${name} is not installed and apt-get install ${pkg} failed`) };
}

export interface FrontProxy {
  url: string;
  dir: string;
  stop(): Promise<void>;
}

/**
 * Runs a proxy in the foreground and resolves once it accepts connections on 127.0.0.1:`port`;
 * `why` adds to the error when it exits early (nginx keeps its reasons in its error log).
 */
export async function runFrontProxy(
  name: string,
  bin: string,
  args: string[],
  opts: { port: number; dir: string; env?: NodeJS.ProcessEnv; readyMs: number; why?: () => string },
): Promise<FrontProxy> {
  const proc: ChildProcess = spawn(bin, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(opts.env && { env: opts.env }),
  });
  let stderr = '';
  proc.stderr!.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const deadline = Date.now() + opts.readyMs;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${name} exited: ${stderr}${opts.why?.() ?? ''}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port: opts.port }, () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline)
      throw new Error(`${name} did not listen within ${opts.readyMs / 1000} s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${opts.port}`,
    dir: opts.dir,
    stop: async () => {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
