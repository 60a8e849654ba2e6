import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { HOOKCTL_BIN } from '../helpers/hookd.js';

/**
 * Runs the shell steps of a page as a reader would: each ```sh block with bash, in the directory
 * the page says, with `hookctl` on the PATH (the shim `npm link` would make) and the Node that
 * runs the tests first on it.
 */

export interface Block {
  /** The section (## heading) it is under. */
  section: string;
  code: string;
}

/** The ```sh blocks of a Markdown page, in order, with their section. */
export function shellBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  let section = '';
  let code: string[] | undefined;
  for (const line of markdown.split('\n')) {
    if (code) {
      if (line.startsWith('```')) {
        blocks.push({ section, code: code.join('\n') });
        code = undefined;
      } else code.push(line);
    } else if (line.startsWith('```sh')) code = [];
    else if (line.startsWith('## ')) section = line.slice(3).trim();
  }
  return blocks;
}

/** A bin directory holding `hookctl`, as `npm link` puts it on the PATH. */
export function hookctlShim(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const shim = join(bin, 'hookctl');
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${HOOKCTL_BIN}" "$@"\n`);
  chmodSync(shim, 0o755);
  return bin;
}

export function readerEnv(home: string, bin: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    ...extra,
  };
  for (const k of ['XDG_STATE_HOME', 'XDG_CONFIG_HOME', 'STATE_DIRECTORY', 'HOOKD_DATA_DIR', 'NODE_PATH'])
    delete env[k];
  return env;
}

export interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/** Runs one block to its end. */
export function runBlock(
  code: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 120_000,
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const p = spawn('bash', ['-e', '-c', code], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error(`timed out after ${timeoutMs} ms:\n${code}\n${out}\n${err}`));
    }, timeoutMs);
    p.on('error', reject);
    p.on('close', (status) => {
      clearTimeout(timer);
      resolve({ code: status, out, err });
    });
  });
}

export interface Background {
  proc: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Starts a block that runs until stopped (a server, a consumer), in a process group of its own. */
export function startBlock(code: string, cwd: string, env: NodeJS.ProcessEnv): Background {
  const proc = spawn('bash', ['-c', code], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => proc.on('close', () => resolve()));
  return {
    proc,
    output: () => out,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null && proc.pid !== undefined) {
        try {
          process.kill(-proc.pid, 'SIGTERM');
        } catch {
          // the group has ended already
        }
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    },
  };
}

export function page(root: string, path: string): string {
  return readFileSync(join(root, path), 'utf8');
}
