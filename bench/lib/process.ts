/**
 * Process helpers for the benchmarks: CPU pinning (the machine has two shared cores: the server
 * under test gets one, the load generator the other), spawning servers and waiting until they
 * are ready, and reading CPU time and memory from /proc.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { createInterface } from 'node:readline';

/** Where the servers under test run, and where the load generator and peers run. */
export const SERVER_CORE = 0;
export const LOAD_CORE = 1;

/** The path of an executable on PATH, or undefined. */
export function which(cmd: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  const p = r.stdout.trim();
  return r.status === 0 && p ? p : undefined;
}

let pinning: boolean | undefined;

/** Whether processes can be pinned: taskset exists and there are at least two cores. */
export function canPin(): boolean {
  pinning ??= which('taskset') !== undefined && availableParallelism() >= 2;
  return pinning;
}

/** Prefixes `taskset -c core` when pinning is possible and wanted (core undefined: not pinned). */
export function pinned(core: number | undefined, cmd: string, args: string[]): [string, string[]] {
  if (core === undefined || !canPin()) return [cmd, args];
  return ['taskset', ['-c', String(core), cmd, ...args]];
}

/**
 * Pins every thread of this process (the harness hosts load generators) to one core, or with
 * `undefined` lets it run on every core again.
 */
export function pinSelf(core: number | undefined): boolean {
  if (!canPin()) return false;
  // cpus(), not availableParallelism(): the latter counts only the cores this process may use now,
  // which is one while it is pinned, so it cannot say how far to widen the mask again.
  const cores = core === undefined ? `0-${cpus().length - 1}` : String(core);
  const r = spawnSync('taskset', ['-a', '-p', '-c', cores, String(process.pid)], { stdio: 'ignore' });
  return r.status === 0;
}

export interface Running {
  proc: ChildProcess;
  pid: number;
  /** The last stdout lines (bounded: hookd logs every callback at info). */
  lines: string[];
  stderr(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

export interface StartOptions {
  core?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Resolves the start when a stdout line satisfies it; without it the start resolves at once. */
  ready?: (line: string) => boolean;
  timeoutMs?: number;
}

const KEEP_LINES = 200;

/** Spawns a (pinned) process, draining its output, and waits until it reports being ready. */
export async function start(cmd: string, args: string[], opts: StartOptions = {}): Promise<Running> {
  const [c, a] = pinned(opts.core, cmd, args);
  const proc = spawn(c, a, {
    env: opts.env ?? process.env,
    cwd: opts.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-8000);
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const rl = createInterface({ input: proc.stdout! });
  let onLine: ((line: string) => void) | undefined;
  rl.on('line', (line) => {
    lines.push(line);
    if (lines.length > KEEP_LINES) lines.splice(0, lines.length - KEEP_LINES);
    onLine?.(line);
  });
  const running: Running = {
    proc,
    pid: proc.pid ?? -1,
    lines,
    stderr: () => err,
    exited,
    async stop(graceMs = 5000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  if (!opts.ready) return running;
  const ready = opts.ready;
  await new Promise<void>((resolve, reject) => {
    const timeoutMs = opts.timeoutMs ?? 30_000;
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} not ready within ${timeoutMs} ms: ${err.slice(-2000)}`));
    }, timeoutMs);
    onLine = (line) => {
      if (ready(line)) {
        clearTimeout(timer);
        onLine = undefined;
        resolve();
      }
    };
    for (const l of lines) onLine?.(l);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited with ${code} before it was ready: ${err.slice(-2000)}`));
    });
  });
  return running;
}

let ticks: number | undefined;
const clockTicks = (): number => {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
};

interface StatFields {
  ppid: number;
  cpuTicks: number;
}

const readStat = (pid: number): StatFields | undefined => {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), cpuTicks: Number(f[11]) + Number(f[12]) };
  } catch {
    return undefined;
  }
};

/** A process's children, from /proc (a --workers primary's workers). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * CPU seconds (user + system, every thread) used so far by a process and its descendants, so
 * that nginx's workers count, and `taskset` exec'ing into the real program does not matter.
 */
export function cpuSeconds(pid: number): number {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    const p = Number(name);
    if (!Number.isInteger(p) || p <= 0) continue;
    const st = readStat(p);
    if (!st) continue;
    const list = children.get(st.ppid) ?? [];
    list.push(p);
    children.set(st.ppid, list);
  }
  let total = 0;
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop()!;
    total += readStat(p)?.cpuTicks ?? 0;
    stack.push(...(children.get(p) ?? []));
  }
  return total / clockTicks();
}

/** CPU seconds of every process whose command name is `comm` (a server and all its backends). */
export function cpuByComm(comm: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    try {
      const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const c = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
      if (!c.startsWith(comm)) continue;
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      out.set(pid, (Number(f[11]) + Number(f[12])) / clockTicks());
    } catch {
      // gone
    }
  }
  return out;
}

/**
 * CPU seconds of one process's live threads, summed by thread name (`/proc/PID/task/TID/comm`, at
 * most 15 characters): the main thread is named after the process, worker threads after their
 * `name` option, V8's and libuv's helpers after themselves.
 */
export function cpuByThread(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      out.set(comm, (out.get(comm) ?? 0) + (Number(f[11]) + Number(f[12])) / clockTicks());
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/** Resident and peak resident memory of one process in bytes (from /proc/PID/status). */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') * 1024, peak: kb('VmHWM') * 1024 };
}

/** The first line of a command's version output matching `re` (group 1), or undefined. */
export function versionOf(cmd: string, args: string[], re: RegExp): string | undefined {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error) return undefined;
  return re.exec(`${r.stdout ?? ''}\n${r.stderr ?? ''}`)?.[1];
}

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
