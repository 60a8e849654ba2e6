import { spawn } from 'node:child_process';
import { dirname } from 'node:path';

/** How a program run by `runChild` ended, and what it wrote. */
export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `file args` in `cwd` (this process's own when absent), collecting what it writes; its
 * standard input is `input` when given and otherwise none. One that is still running after
 * `timeoutMs` is killed and the promise rejects, naming it and with its stderr. It never blocks
 * the event loop (spawnSync would), so a server the test runs in this process keeps answering.
 */
export function runChild(
  file: string,
  args: string[],
  opts: { cwd?: string; env: NodeJS.ProcessEnv; timeoutMs: number; input?: string },
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} ${args.join(' ')} did not finish within ${opts.timeoutMs} ms\n${stderr}`));
    }, opts.timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin!.end(opts.input);
  });
}

/**
 * This process's environment without `npm test`'s own settings (npm_config_*, lifecycle
 * variables), with this Node first on PATH: the bins npm installs start with
 * `#!/usr/bin/env node`.
 */
export function npmFreeEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  env.PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;
  return env;
}
