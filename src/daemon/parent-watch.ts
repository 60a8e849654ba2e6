import type { Logger } from 'pino';

/**
 * Under `npm start`, hookd's parent is npm. npm passes SIGINT and SIGTERM on (and the start
 * script `exec`s, so no shell sits between), but a SIGHUP or SIGKILL ends npm alone and would
 * leave hookd running, orphaned, still holding its port. So when npm started it, hookd watches
 * its parent and stops (as on SIGTERM) once the parent is gone. A daemon started any other way
 * (systemd, a shell, a container) is left alone.
 */
export function stopWithParent(
  log: Logger,
  env: NodeJS.ProcessEnv = process.env,
  everyMs = 500,
): (() => void) | undefined {
  if (env.npm_lifecycle_event === undefined) return undefined;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    log.warn({ signal: 'SIGTERM' }, 'npm, which started hookd, is gone: stopping');
    process.kill(process.pid, 'SIGTERM');
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
