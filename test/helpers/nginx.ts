import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeNginxConf } from '../../bench/lib/nginx-conf.js';
import { type FrontProxy, findProgram, runFrontProxy } from './front-proxy.js';
import { tempDir } from './hookd.js';

/** nginx for tests that put it in front of hookd (Debian's nginx-light when it has to be installed). */
export function findNginx(): { bin?: string; skip?: string } {
  return findProgram('nginx', ['/usr/sbin/nginx', '/usr/local/sbin/nginx'], 'nginx-light');
}

export type Nginx = FrontProxy;

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
  const errorLog = join(dir, 'error.log');
  return runFrontProxy('nginx', bin, ['-p', dir, '-e', errorLog, '-c', 'nginx.conf', '-g', 'daemon off;'], {
    port,
    dir,
    readyMs: 10_000,
    why: () => (existsSync(errorLog) ? readFileSync(errorLog, 'utf8') : ''),
  });
}
