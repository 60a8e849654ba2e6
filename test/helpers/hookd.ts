import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pino from 'pino';
import type { HookdConfig } from '../../src/config/config.js';
import { loadConfig } from '../../src/config/load-config.js';
import { ADMIN_TOKEN_FILE } from '../../src/daemon/bootstrap.js';
import { createHookd, type Hookd } from '../../src/daemon/hookd.js';
import { packageInfo } from '../../src/util/package-info.js';

/** The repository root, whether the tests run from dist/ or through tsx. */
export const REPO_ROOT = packageInfo().root;
export const HOOKD_BIN = join(REPO_ROOT, 'bin', 'hookd.js');
export const HOOKCTL_BIN = join(REPO_ROOT, 'bin', 'hookctl.js');

/**
 * The tests spawn bin/hookd.js and bin/hookctl.js, which run dist/: a missing build is said
 * plainly rather than failing obscurely.
 */
export function assertBuilt(): void {
  for (const compiled of [
    join(REPO_ROOT, 'dist', 'src', 'hookctl', 'main.js'),
    join(REPO_ROOT, 'dist', 'src', 'cluster', 'cluster-member.js'),
  ]) {
    assert.ok(existsSync(compiled), `${compiled} is missing: compile first with npx tsc -p tsconfig.json`);
  }
}

export function tempDir(prefix = 'hookd-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TestDaemon {
  hookd: Hookd;
  url: string;
  /** The operations listener (/metrics, /healthz, /readyz); '' when switched off. */
  opsUrl: string;
  /** The web console's own listener; '' when switched off. */
  consoleUrl: string;
  token: string;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * A real hookd in this process, on a random loopback port with a temp data dir. Callbacks to
 * loopback are allowed (test receivers listen there).
 */
export async function startHookd(
  overrides: Partial<HookdConfig> = {},
  opts: { dataDir?: string; keepDataDir?: boolean } = {},
): Promise<TestDaemon> {
  const dataDir = opts.dataDir ?? tempDir();
  const config: HookdConfig = {
    // The operations and console listeners on free ports too (their defaults would collide between tests).
    ...loadConfig({
      env: {},
      flags: { dataDir, listen: '127.0.0.1:0', opsListen: '127.0.0.1:0', consoleListen: '127.0.0.1:0' },
    }),
    allowCallbackNets: ['127.0.0.0/8', '::1/128'],
    logLevel: 'silent',
    shutdownTimeoutMs: 2000,
    ...overrides,
  };
  const hookd = await createHookd(config, pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }));
  const url = await hookd.listen();
  const token = readFileSync(join(dataDir, ADMIN_TOKEN_FILE), 'utf8').trim();
  return {
    hookd,
    url,
    opsUrl: hookd.opsUrl(),
    consoleUrl: hookd.consoleUrl(),
    token,
    dataDir,
    close: async () => {
      await hookd.close();
      if (!opts.keepDataDir && !opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The daemon as seen from the web console's own listener: `url` is the console's
 * origin, which serves the API too (never the proxy).
 */
export function onConsoleOrigin(t: TestDaemon): TestDaemon {
  assert.ok(t.consoleUrl, 'the console listener is on');
  return { ...t, url: t.consoleUrl };
}

export interface HookdProcess {
  proc: ChildProcess;
  url: string;
  /** The operations listener from the start-up line; '' when switched off. */
  opsUrl: string;
  dataDir: string;
  /** admin.token's content, or '' when the data dir has none. */
  token: string;
  /** Every stdout line so far (pino JSON). */
  lines: string[];
  stderr: () => string;
  /** Settles when the process exits, with its code or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM and wait for exit; resolves to the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** kill -9 and wait. */
  kill(): Promise<void>;
}

export interface SpawnOptions {
  dataDir?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /**
   * Pass `--allow-callback-net 127.0.0.0/8` (default true) so that callbacks may reach test
   * receivers; false when a test sets the allow list itself (the flag would override a config file).
   */
  allowLoopback?: boolean;
}

/** A real `hookd` process (bin/hookd.js), for restarts, signals and crashes. */
export async function spawnHookd(args: string[] = [], opts: SpawnOptions = {}): Promise<HookdProcess> {
  const dataDir = opts.dataDir ?? tempDir();
  // A bound that finds a daemon that never starts, not a speed check: a loaded CI machine starts a
  // Node process slowly.
  const timeoutMs = opts.timeoutMs ?? 30000;
  const proc = spawn(
    process.execPath,
    [
      HOOKD_BIN,
      '--data-dir',
      dataDir,
      '--listen',
      '127.0.0.1:0',
      '--ops-listen',
      '127.0.0.1:0',
      '--console-listen',
      '127.0.0.1:0',
      ...(opts.allowLoopback === false ? [] : ['--allow-callback-net', '127.0.0.0/8']),
      ...args,
    ],
    { env: { ...process.env, HOOKD_LOG_LEVEL: 'info', ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: string[] = [];
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let opsUrl = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running: its pipes would keep the test file from ever ending.
      proc.kill('SIGKILL');
      reject(new Error(`hookd did not start within ${timeoutMs} ms: ${err}`));
    }, timeoutMs);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      lines.push(line);
      try {
        const rec = JSON.parse(line) as { msg?: string; url?: string; opsUrl?: string | null };
        if (rec.msg === 'listening' && rec.url) {
          opsUrl = rec.opsUrl ?? '';
          clearTimeout(timer);
          resolve(rec.url);
        }
      } catch {
        // not JSON: keep it in `lines` for the test to look at
      }
    });
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`hookd exited with ${code} before listening: ${err}`));
    });
  });
  const tokenFile = join(dataDir, ADMIN_TOKEN_FILE);
  return {
    proc,
    url,
    opsUrl,
    dataDir,
    token: existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : '',
    lines,
    stderr: () => err,
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      proc.kill(signal);
      return (await exited).code;
    },
    async kill() {
      proc.kill('SIGKILL');
      await exited;
    },
  };
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A minimal API client for tests: JSON in, JSON (or text) out. */
export async function api<T = unknown>(
  base: string,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiResponse<T>> {
  const h: Record<string, string> = { ...headers };
  if (token) h.authorization = `Bearer ${token}`;
  let payload: string | undefined;
  if (body !== undefined) {
    payload = typeof body === 'string' ? body : JSON.stringify(body);
    h['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, { method, headers: h, body: payload });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // leave as text
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/**
 * How many hooks (of any user) a served `GET path` answered 200 fires, asked of the daemon's
 * report endpoint with an admin token: a way to see what a daemon's match index holds.
 */
export async function firedByReport(url: string, token: string, path: string): Promise<number> {
  const r = await api<{ fired: number }>(url, token, 'POST', '/_hookd/report', {
    Method: 'GET',
    Path: path,
    StatusCode: 200,
    Phase: 'after',
  });
  assert.equal(r.status, 202, r.text);
  return r.body.fired;
}
