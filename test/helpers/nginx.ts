import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { writeNginxConf } from '../../bench/lib/nginx-conf.js';
import { tempDir } from './hookd.js';

/**
 * nginx for tests that put it in front of hookd. Found on PATH or in /usr/sbin; when missing
 * and running as root with apt-get, `apt-get install -y nginx-light` installs it (as
 * bench/setup.ts does); otherwise `skip` says why, for `describe(..., { skip })`.
 */
export function findNginx(): { bin?: string; skip?: string } {
  const look = (): string | undefined => {
    const r = spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' });
    const onPath = r.status === 0 ? r.stdout.trim() : '';
    if (onPath) return onPath;
    return ['/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((p) => existsSync(p));
  };
  let bin = look();
  if (bin) return { bin };
  if (process.getuid?.() !== 0 || spawnSync('sh', ['-c', 'command -v apt-get']).status !== 0) {
    return { skip: 'nginx is not installed (install it with: sudo apt-get install -y nginx-light)' };
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    spawnSync('apt-get', ['install', '-y', 'nginx-light'], { stdio: 'ignore', env }).status;
  if (install() !== 0) {
    spawnSync('apt-get', ['update'], { stdio: 'ignore', env });
    install();
  }
  bin = look();
  return bin ? { bin } : { skip: 'nginx is not installed and apt-get install nginx-light failed' };
}

export interface Nginx {
  url: string;
  dir: string;
  stop(): Promise<void>;
}

/** Starts nginx with `server` as the body of its one server block (listening on a free port). */
export async function startNginx(
  bin: string,
  port: number,
  server: string,
  /** Directives of the main context, e.g. `user www-data;`. */
  main = '',
): Promise<Nginx> {
  const dir = tempDir('hookd-nginx-');
  writeNginxConf(
    dir,
    256,
    `  server {
    listen 127.0.0.1:${port};
    ${server}
  }`,
    main,
  );
  const proc: ChildProcess = spawn(
    bin,
    ['-p', dir, '-e', join(dir, 'error.log'), '-c', 'nginx.conf', '-g', 'daemon off;'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  proc.stderr!.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (proc.exitCode !== null) {
      const log = existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '';
      throw new Error(`nginx exited: ${stderr}${log}`);
    }
    const up = await new Promise<boolean>((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline) throw new Error(`nginx did not listen within 10 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    dir,
    stop: async () => {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
