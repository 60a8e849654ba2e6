import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { CliDeps } from '../../src/cli/context.js';
import { runCli } from '../../src/cli/main.js';
import { HOOKCTL_BIN, REPO_ROOT as ROOT, tempDir } from '../helpers/hookd.js';

// One way of finding the repository and its binaries for every test (test/helpers/hookd.ts).
export { HOOKCTL_BIN, ROOT };

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The compiled CLI must exist: bin/hookctl.js imports dist/src/cli/main.js. */
export function assertBuilt(): void {
  const main = join(ROOT, 'dist', 'src', 'cli', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run npx tsc -p tsconfig.json first`);
}

/**
 * A clean environment for a hookctl child: nothing inherited that could change its behaviour
 * (HOOKD_*, NO_COLOR, FORCE_COLOR, a real ~/.config), a temp HOME and XDG_CONFIG_HOME.
 */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const home = tempDir('hookctl-home-');
  mkdirSync(join(home, '.config'), { recursive: true });
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    ...extra,
  };
}

/** Runs the real `hookctl` binary (node bin/hookctl.js) as a child process; stdin is a pipe or /dev/null. */
export function hookctl(
  args: string[],
  opts: { env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number },
): Promise<RunResult> {
  return runProcess(process.execPath, [HOOKCTL_BIN, ...args], opts);
}

/**
 * Runs a program without blocking the event loop (spawnSync would: the hookd these tests start
 * lives in this process and must keep answering).
 */
export function runProcess(
  file: string,
  args: string[],
  opts: { env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
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
      reject(
        new Error(`${file} ${args.join(' ')} did not finish within ${opts.timeoutMs ?? 20000} ms\n${stderr}`),
      );
    }, opts.timeoutMs ?? 20000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin!.end(opts.input);
  });
}

/** A port on 127.0.0.1 that nothing listens on (bound once, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A writable that records what is written, posing as a terminal or a pipe. */
export class Sink {
  readonly chunks: string[] = [];
  isTTY: boolean;
  columns: number | undefined;
  constructor(isTTY: boolean, columns = 120) {
    this.isTTY = isTTY;
    this.columns = isTTY ? columns : undefined;
  }
  write(chunk: string | Uint8Array): boolean {
    this.chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }
  text(): string {
    return this.chunks.join('');
  }
}

/** A stdin that is a terminal (with raw mode, as login needs) or a pipe fed with `input`. */
export function fakeStdin(opts: { tty: boolean; input?: string }): PassThrough & {
  isTTY?: boolean;
  setRawMode?: (raw: boolean) => unknown;
  rawModes: boolean[];
} {
  const stdin = new PassThrough() as PassThrough & {
    isTTY?: boolean;
    setRawMode?: (raw: boolean) => unknown;
    rawModes: boolean[];
  };
  stdin.rawModes = [];
  if (opts.tty) {
    stdin.isTTY = true;
    stdin.setRawMode = (raw: boolean) => {
      stdin.rawModes.push(raw);
      return stdin;
    };
  }
  if (opts.input !== undefined) stdin.end(opts.input);
  return stdin;
}

export interface InProcess {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs hookctl in this process with injected streams: the way to test terminal (TTY) behaviour. */
export async function runInProcess(
  args: string[],
  opts: {
    env: NodeJS.ProcessEnv;
    tty: boolean;
    stdin?: CliDeps['io']['stdin'];
    onSignal?: CliDeps['onSignal'];
    home?: string;
    /** Terminal width (default 120). */
    columns?: number;
  },
): Promise<InProcess> {
  const stdout = new Sink(opts.tty, opts.columns);
  const stderr = new Sink(opts.tty, opts.columns);
  const code = await runCli(args, {
    io: { stdin: opts.stdin ?? fakeStdin({ tty: opts.tty, input: '' }), stdout, stderr },
    env: opts.env,
    ...(opts.home && { home: opts.home }),
    ...(opts.onSignal && { onSignal: opts.onSignal }),
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** Matches any ANSI colour escape. */
export const ANSI = /\u001b\[[0-9;]*m/;
