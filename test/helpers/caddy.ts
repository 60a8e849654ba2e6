import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './hookd.js';

/**
 * Caddy for tests that put it in front of hookd, as test/helpers/nginx.ts does for nginx: found
 * on PATH or in /usr/bin; when missing and running as root with apt-get, `apt-get install -y
 * caddy` (Debian's) installs it; otherwise `skip` says why, for `describe(..., { skip })`.
 */
export function findCaddy(): { bin?: string; skip?: string } {
  const look = (): string | undefined => {
    const r = spawnSync('sh', ['-c', 'command -v caddy'], { encoding: 'utf8' });
    const onPath = r.status === 0 ? r.stdout.trim() : '';
    if (onPath) return onPath;
    return ['/usr/bin/caddy', '/usr/local/bin/caddy'].find((p) => existsSync(p));
  };
  let bin = look();
  if (bin) return { bin };
  if (process.getuid?.() !== 0 || spawnSync('sh', ['-c', 'command -v apt-get']).status !== 0) {
    return { skip: 'caddy is not installed (install it with: sudo apt-get install -y caddy)' };
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['install', '-y', 'caddy'], { stdio: 'ignore', env }).status;
  if (install() !== 0) {
    spawnSync('apt-get', ['update'], { stdio: 'ignore', env });
    install();
  }
  bin = look();
  return bin ? { bin } : { skip: 'caddy is not installed and apt-get install caddy failed' };
}

export interface Caddy {
  url: string;
  dir: string;
  stop(): Promise<void>;
}

/**
 * Starts Caddy in the foreground with `site` as the body of one site block on 127.0.0.1:`port`
 * (plain HTTP, no admin endpoint, its state inside a temp dir, so the system Caddy is never touched).
 */
export async function startCaddy(bin: string, port: number, site: string): Promise<Caddy> {
  const dir = tempDir('hookd-caddy-');
  mkdirSync(join(dir, 'data'), { recursive: true });
  const conf = `{
  admin off
  auto_https off
}
http://127.0.0.1:${port} {
  bind 127.0.0.1
${site}
}
`;
  writeFileSync(join(dir, 'Caddyfile'), conf);
  const proc: ChildProcess = spawn(
    bin,
    ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        HOME: dir,
        XDG_DATA_HOME: join(dir, 'data'),
        XDG_CONFIG_HOME: join(dir, 'data'),
      },
    },
  );
  let stderr = '';
  proc.stderr!.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`caddy exited: ${stderr}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline) throw new Error(`caddy did not listen within 15 s: ${stderr}`);
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
