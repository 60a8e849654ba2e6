import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { CliDeps } from '../../src/hookctl/context.js';
import { runCli } from '../../src/hookctl/main.js';
import { assertBuilt, HOOKCTL_BIN, REPO_ROOT as ROOT, tempDir } from '../helpers/hookd.js';
import { type ChildResult, runChild } from '../helpers/run-child.js';

export { closedPort } from '../helpers/servers.js';
// One way of finding the repository and its binaries for every test (test/helpers/hookd.ts).
export { assertBuilt, HOOKCTL_BIN, ROOT };

/** How a hookctl child ended, and what it wrote. */
export type RunResult = ChildResult;

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

/** Runs a program in this directory (stdin a pipe holding `input`, or none); 20 s unless told. */
export function runProcess(
  file: string,
  args: string[],
  opts: { env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number },
): Promise<RunResult> {
  return runChild(file, args, {
    cwd: process.cwd(),
    env: opts.env,
    timeoutMs: opts.timeoutMs ?? 20_000,
    ...(opts.input !== undefined && { input: opts.input }),
  });
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
    /** The API client's dispatcher: an undici MockAgent answering as the test says. */
    dispatcher?: CliDeps['dispatcher'];
  },
): Promise<InProcess> {
  const stdout = new Sink(opts.tty, opts.columns);
  const stderr = new Sink(opts.tty, opts.columns);
  const code = await runCli(args, {
    io: { stdin: opts.stdin ?? fakeStdin({ tty: opts.tty, input: '' }), stdout, stderr },
    env: opts.env,
    ...(opts.home && { home: opts.home }),
    ...(opts.onSignal && { onSignal: opts.onSignal }),
    ...(opts.dispatcher && { dispatcher: opts.dispatcher }),
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/**
 * hookctl in this process in the spawned helper's shape (`hookctl(args, { env, input })`): stdout
 * a pipe unless `tty`, stdin a pipe holding `input`, HOME the env's. A test that only needs the
 * command runs here, without a process of its own.
 */
export function hookctlInProcess(
  args: string[],
  opts: { env: NodeJS.ProcessEnv; input?: string; tty?: boolean },
): Promise<InProcess> {
  return runInProcess(args, {
    env: opts.env,
    tty: opts.tty ?? false,
    ...(opts.env.HOME !== undefined && { home: opts.env.HOME }),
    stdin: fakeStdin({ tty: false, input: opts.input ?? '' }),
  });
}

/** A valid hook the command tests create and list: a time-series path with one capture. */
export const SAMPLE_HOOK = {
  PathPattern: '/repositories/*/timeseries/(*)',
  Methods: ['GET'],
  Callback: 'http://127.0.0.1:9/cb',
};

/** Matches any ANSI colour escape. */
export const ANSI = /\u001b\[[0-9;]*m/;

/** A Sink that can be waited on: resolves once the text written so far matches. */
export class WatchedSink extends Sink {
  readonly events = new EventEmitter();
  override write(chunk: string | Uint8Array): boolean {
    super.write(chunk);
    this.events.emit('write');
    return true;
  }
  async waitFor(pattern: RegExp, timeoutMs = 15000): Promise<string> {
    const deadline = setTimeout(() => this.events.emit('timeout'), timeoutMs);
    try {
      while (!pattern.test(this.text())) {
        const [which] = await Promise.race([
          once(this.events, 'write').then(() => ['write']),
          once(this.events, 'timeout').then(() => ['timeout']),
        ]);
        if (which === 'timeout') throw new Error(`timed out waiting for ${pattern}; got:\n${this.text()}`);
      }
      return this.text();
    } finally {
      clearTimeout(deadline);
    }
  }
}

/**
 * Runs a streaming hookctl command (`tail`, `listen`) in this process until `interrupt()`, which
 * plays the part of Ctrl-C; its output can be waited on while it runs.
 */
export function startStreaming(
  command: string,
  args: string[],
  opts: { env: NodeJS.ProcessEnv; tty: boolean },
) {
  const stdout = new WatchedSink(opts.tty);
  const stderr = new WatchedSink(opts.tty);
  let handler: ((s: NodeJS.Signals) => void) | undefined;
  const deps: CliDeps = {
    io: { stdin: fakeStdin({ tty: false, input: '' }), stdout, stderr },
    env: opts.env,
    onSignal: (h) => {
      handler = h;
      return () => {
        handler = undefined;
      };
    },
  };
  const done = runCli([command, ...args], deps);
  return { stdout, stderr, done, interrupt: () => handler?.('SIGINT') };
}

/** A hookctl run as the hooks tests need it: spawned (`hookctl`) or in this process. */
export type HookctlRun = (
  args: string[],
  opts: { env: NodeJS.ProcessEnv; input?: string },
) => Promise<{ code: number | null; stdout: string; stderr: string }>;

/**
 * What the hooks tests do around the command under test, through `run` against the daemon that
 * `env()` names: write a hook file into `dir()`, create a hook from stdin, delete every hook.
 */
export function hookFixtures(run: HookctlRun, env: () => NodeJS.ProcessEnv, dir: () => string) {
  return {
    file(name: string, content: unknown): string {
      const path = join(dir(), name);
      writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
      return path;
    },
    async createHook(doc: unknown): Promise<string> {
      const r = await run(['create', '-f', '-'], { env: env(), input: JSON.stringify(doc) });
      assert.equal(r.code, 0, r.stderr);
      return r.stdout.trim();
    },
    async deleteAll(): Promise<void> {
      const r = await run(['list'], { env: env() });
      const ids = r.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t')[0]!);
      if (ids.length) assert.equal((await run(['delete', ...ids], { env: env() })).code, 0);
    },
  };
}
