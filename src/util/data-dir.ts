import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * hookd's default data directory: `$STATE_DIRECTORY` (systemd), else `$XDG_STATE_HOME/hookd`,
 * else `~/.local/state/hookd`. Here, not with the option table, because hookctl needs it too
 * (to find a local daemon's admin token) and must not load the daemon's option table to get it.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  // systemd may pass several colon-separated directories; the first is ours.
  if (env.STATE_DIRECTORY) return env.STATE_DIRECTORY.split(':')[0]!;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'hookd');
  return join(homedir(), '.local', 'state', 'hookd');
}
