import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { REPO_ROOT, tempDir } from '../helpers/hookd.js';
import { skipReason } from '../helpers/require.js';
import { sleep } from '../helpers/servers.js';

// `npm start`: signals reach hookd, and stopping npm by its PID, however, leaves no
// hookd behind (before, a SIGTERM to npm killed the shell around hookd and orphaned it, still
// holding its port).

/** Every process below `pid` (Linux /proc). */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const walk = (p: number) => {
    let children: number[] = [];
    try {
      children = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number);
    } catch {
      return;
    }
    for (const c of children) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

const alive = (pid: number): boolean => {
  try {
    // A zombie is gone for our purpose (it holds no port); /proc says which it is.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
};

interface Started {
  npm: ChildProcess;
  url: string;
  /** hookd's own PID (npm's descendants once it listens). */
  pids: number[];
}

async function npmStart(): Promise<Started> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  const npm = spawn(
    'npm',
    [
      'start',
      '--',
      '--data-dir',
      tempDir(),
      '--listen',
      '127.0.0.1:0',
      '--console-listen',
      '127.0.0.1:0',
      '--ops-listen',
      '127.0.0.1:0',
      '--log-format',
      'json',
    ],
    { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const out: string[] = [];
  npm.stderr!.on('data', (d: Buffer) => out.push(d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start: no start-up line\n${out.join('')}`)), 60_000);
    createInterface({ input: npm.stdout! }).on('line', (line) => {
      out.push(`${line}\n`);
      if (!line.startsWith('{')) return; // npm's own "> hookd@… start" lines
      const rec = JSON.parse(line) as { msg?: string; url?: string };
      if (rec.msg === 'listening' && rec.url) {
        clearTimeout(timer);
        resolve(rec.url);
      }
    });
    npm.once('exit', (code) => reject(new Error(`npm start exited ${code}\n${out.join('')}`)));
  });
  const pids = descendants(npm.pid!);
  assert.ok(pids.length >= 1, 'hookd runs below npm');
  return { npm, url, pids };
}

async function allGone(pids: number[], url: string): Promise<void> {
  for (let waited = 0; pids.some(alive); waited += 100) {
    if (waited > 20_000) {
      for (const p of pids.filter(alive)) process.kill(p, 'SIGKILL');
      assert.fail(`still running 20 s after npm was stopped: ${pids.filter(alive).join(', ')}`);
    }
    await sleep(100);
  }
  await assert.rejects(fetch(`${url}/hooks`), 'the port is free');
}

describe('npm start', { skip: skipReason(!existsSync('/proc/self/task') && 'needs Linux /proc') }, () => {
  it('runs hookd without a shell in between: npm’s only child is hookd itself', async () => {
    const s = await npmStart();
    try {
      assert.equal(s.pids.length, 1, `npm's descendants: ${s.pids.join(', ')}`);
      const cmd = readFileSync(`/proc/${s.pids[0]}/cmdline`, 'utf8').split('\0');
      assert.match(cmd[0]!, /node$/);
      assert.match(cmd[1]!, /bin\/hookd\.js$/);
    } finally {
      s.npm.kill('SIGTERM');
      await allGone(s.pids, s.url);
    }
  });

  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGKILL'] as const) {
    it(`${signal} to npm's PID leaves no hookd running`, async () => {
      const s = await npmStart();
      const exited = new Promise<void>((r) => s.npm.once('exit', () => r()));
      process.kill(s.npm.pid!, signal);
      await exited;
      await allGone(s.pids, s.url);
    });
  }
});
