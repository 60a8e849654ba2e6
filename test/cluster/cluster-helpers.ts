import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { HOOKD_BIN } from '../helpers/hookd.js';
import { closedPort, sleep } from '../helpers/servers.js';

export { assertBuilt } from '../helpers/hookd.js';

export interface Instance {
  name: string;
  proc: ChildProcess;
  url: string;
  /** Its operations listener (/metrics, /readyz). */
  opsUrl: string;
  pid: number;
  lines: string[];
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
  /** kill -9 and wait. */
  kill(): Promise<void>;
}

export interface InstanceOptions {
  databaseUrl: string;
  dataDir: string;
  upstream?: string;
  leaseMs?: number;
  logLevel?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * A real `hookd` process on the shared database, on a free loopback port. Ready once `/readyz` (on its operations port)
 * answers 200 (the log stays at `warn` so that thousands of callbacks do not flood the pipe).
 */
export async function startInstance(name: string, opts: InstanceOptions): Promise<Instance> {
  // A port found free can be taken before hookd binds it (test files run two at a time, and
  // daemons listening on port 0 get whatever the kernel hands out): then another port, not a
  // failed test.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(name, opts);
    } catch (err) {
      if (attempt >= 3 || !(err instanceof PortTaken)) throw err;
    }
  }
}

/**
 * Starts several instances at once. If one fails, those already running are killed before the
 * error is thrown: left running, they would keep the test file from ever ending.
 */
export async function startInstances<T extends [string, InstanceOptions][]>(
  ...specs: T
): Promise<{ [K in keyof T]: Instance }> {
  const settled = await Promise.allSettled(specs.map(([name, opts]) => startInstance(name, opts)));
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all(settled.map((s) => (s.status === 'fulfilled' ? s.value.kill() : undefined)));
    throw failed.reason;
  }
  return settled.map((s) => (s as PromiseFulfilledResult<Instance>).value) as { [K in keyof T]: Instance };
}

class PortTaken extends Error {}

async function startOnce(name: string, opts: InstanceOptions): Promise<Instance> {
  const port = await closedPort();
  const opsPort = await closedPort();
  const args = [
    HOOKD_BIN,
    '--database-url',
    opts.databaseUrl,
    '--data-dir',
    opts.dataDir,
    '--listen',
    `127.0.0.1:${port}`,
    '--console-listen',
    '127.0.0.1:0',
    '--ops-listen',
    `127.0.0.1:${opsPort}`,
    '--allow-callback-net',
    '127.0.0.0/8',
    '--cluster-lease',
    String(opts.leaseMs ?? 2000),
    '--log-level',
    opts.logLevel ?? 'warn',
    '--shutdown-timeout',
    '3000',
    ...(opts.upstream ? ['--upstream', opts.upstream] : []),
  ];
  const proc = spawn(process.execPath, args, {
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-20_000);
  });
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    lines.push(line);
    if (lines.length > 2000) lines.splice(0, 1000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = `http://127.0.0.1:${port}`;
  // A bound on a start that never ends, not a speed check (a loaded machine starts Node slowly).
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      const why = `${name} exited before it was ready: ${err}\n${lines.join('\n')}`;
      throw err.includes('EADDRINUSE') ? new PortTaken(why) : new Error(why);
    }
    const ok = await fetch(`http://127.0.0.1:${opsPort}/readyz`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${name} was not ready within 60 s: ${err}\n${lines.join('\n')}`);
    }
    await sleep(50);
  }
  return {
    name,
    proc,
    url,
    opsUrl: `http://127.0.0.1:${opsPort}`,
    pid: proc.pid!,
    lines,
    stderr: () => err,
    exited,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      return (await exited).code;
    },
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** Runs `count` jobs with at most `concurrency` at once; returns their results in order. */
export async function pool<T>(
  count: number,
  concurrency: number,
  job: (i: number) => Promise<T>,
): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      for (;;) {
        const i = next++;
        if (i >= count) return;
        out[i] = await job(i);
      }
    }),
  );
  return out;
}
