/**
 * The bench's setup step: the load generator (wrk) and the reference proxy (nginx) come from
 * Debian. When one is missing and we run as root, `apt-get install -y wrk nginx-light` installs
 * them; otherwise the benchmarks that need them are skipped with a message (autocannon, a dev
 * dependency, stands in for wrk).
 *
 * Run alone: `node dist/bench/setup.js`.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { versionOf, which } from './lib/process.js';

export interface Tools {
  /** e.g. `4.1.0-3+b2`; undefined when wrk is not available. */
  wrk?: string;
  /** e.g. `1.22.1`; undefined when nginx is not available. */
  nginx?: string;
  /** What was installed or why something is missing. */
  messages: string[];
}

const detect = (): Omit<Tools, 'messages'> => {
  const wrk = which('wrk') ? (versionOf('wrk', ['-v'], /wrk\s+(\S+)/) ?? 'unknown') : undefined;
  const nginx = which('nginx') ? (versionOf('nginx', ['-v'], /nginx\/(\S+)/) ?? 'unknown') : undefined;
  return { ...(wrk && { wrk }), ...(nginx && { nginx }) };
};

/** Finds wrk and nginx, installing them with apt-get when missing and allowed (root, `install`). */
export function ensureTools(opts: { install: boolean; log?: (line: string) => void }): Tools {
  const log = opts.log ?? (() => {});
  const messages: string[] = [];
  let found = detect();
  const missing = [!found.wrk && 'wrk', !found.nginx && 'nginx-light'].filter(Boolean) as string[];
  if (missing.length === 0) return { ...found, messages };
  const root = process.getuid?.() === 0;
  if (!opts.install) {
    messages.push(`${missing.join(', ')} not installed; setup skipped (--no-setup)`);
  } else if (!root || !which('apt-get')) {
    messages.push(
      `${missing.join(', ')} not installed and not running as root with apt-get: install with ` +
        `\`sudo apt-get install -y wrk nginx-light\`; the runs that need them are skipped`,
    );
  } else {
    log(`setup: apt-get install -y ${missing.join(' ')}`);
    const install = () =>
      spawnSync('apt-get', ['install', '-y', ...missing], {
        stdio: 'ignore',
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      }).status;
    let status = install();
    if (status !== 0) {
      // A fresh container has no package lists yet.
      spawnSync('apt-get', ['update'], { stdio: 'ignore' });
      status = install();
    }
    messages.push(
      status === 0
        ? `installed ${missing.join(', ')} with apt-get`
        : `apt-get install ${missing.join(' ')} failed (exit ${status}); the runs that need them are skipped`,
    );
    found = detect();
  }
  return { ...found, messages };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const tools = ensureTools({ install: true, log: console.log });
  console.log(`wrk: ${tools.wrk ?? 'missing'}; nginx: ${tools.nginx ?? 'missing'}`);
  for (const m of tools.messages) console.log(m);
}
