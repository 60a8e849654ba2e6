import { PassThrough } from 'node:stream';
import type { CliDeps } from '../../src/cli/context.js';
import { runCli } from '../../src/cli/main.js';

/** What an in-process hookctl run printed, and its exit code. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs hookctl in this process through its `runCli(args, deps)` seam (GitHub CLI's
 * `iostreams.Test()`): no binary spawned, the streams captured, a terminal or a pipe as asked.
 */
export async function hookctl(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; tty?: boolean; home: string; stdin?: string },
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const tty = opts.tty ?? false;
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  stdin.isTTY = tty;
  stdin.end(opts.stdin ?? '');
  const deps: CliDeps = {
    io: {
      stdin,
      stdout: { write: (s: string) => (stdout += s), isTTY: tty, columns: 120 },
      stderr: { write: (s: string) => (stderr += s), isTTY: tty, columns: 120 },
    },
    // Only what the test gives: no HOOKD_* or NO_COLOR of the machine running the tests.
    env: { HOME: opts.home, XDG_CONFIG_HOME: opts.home, XDG_STATE_HOME: opts.home, ...opts.env },
    home: opts.home,
  };
  const code = await runCli(args, deps);
  return { code, stdout, stderr };
}
