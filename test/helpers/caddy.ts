import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type FrontProxy, findProgram, runFrontProxy } from './front-proxy.js';
import { tempDir } from './hookd.js';

/** Caddy for tests that put it in front of hookd, as test/helpers/nginx.ts does for nginx (Debian's caddy). */
export function findCaddy(): { bin?: string; skip?: string } {
  return findProgram('caddy', ['/usr/bin/caddy', '/usr/local/bin/caddy'], 'caddy');
}

export type Caddy = FrontProxy;

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
  return runFrontProxy('caddy', bin, ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], {
    port,
    dir,
    readyMs: 15_000,
    env: { ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'data') },
  });
}
