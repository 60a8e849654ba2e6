import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes `DIR/nginx.conf` for an nginx run in the foreground from its own prefix (`nginx -p DIR
 * -c nginx.conf -g 'daemon off;'`): one worker, every log and temp path inside DIR, so the system
 * nginx and its files are never touched. `http` is the rest of the `http {}` block (upstreams,
 * servers). Shared by the bench's nginx peer and the tests that put nginx in front of hookd.
 */
export function writeNginxConf(dir: string, workerConnections: number, http: string, main = ''): void {
  mkdirSync(join(dir, 'tmp'), { recursive: true });
  const conf = `
${main}
worker_processes 1;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections ${workerConnections}; }
http {
  access_log off;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
${http}
}
`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
}
