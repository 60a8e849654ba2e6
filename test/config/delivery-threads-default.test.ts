import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { cpuQuotaSkipReason, limitCpu } from '../../bench/lib/cgroup.js';
import { REPO_ROOT } from '../helpers/hookd.js';
import { skipReason } from '../helpers/require.js';

// A child process loads the configuration as hookd does, on the CPUs `taskset` leaves it.
const LOADER = pathToFileURL(join(REPO_ROOT, 'dist', 'src', 'config', 'load-config.js')).href;
function threadsWith(cpus: string | undefined, env: Record<string, string> = {}): number {
  const script = `const { loadConfig } = await import(${JSON.stringify(LOADER)});
console.log(loadConfig({ env: process.env }).deliveryThreads);`;
  const args = ['--input-type=module', '-e', script];
  const out =
    cpus === undefined
      ? execFileSync(process.execPath, args, { env: { ...env }, encoding: 'utf8' })
      : execFileSync('taskset', ['-c', cpus, process.execPath, ...args], {
          env: { ...env },
          encoding: 'utf8',
        });
  return Number(out.trim());
}

/**
 * The default as a process put into a real cgroup with a CPU quota of `cpus` sees it: the child
 * waits on stdin until it is in the cgroup, then loads the configuration.
 */
async function threadsUnderQuota(cpus: number): Promise<number> {
  const script = `process.stdin.once('data', async () => {
  const { loadConfig } = await import(${JSON.stringify(LOADER)});
  console.log(loadConfig({ env: {} }).deliveryThreads);
  process.exit(0);
});`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: {},
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  // Without a pid the write to cgroup.procs would move whoever writes it: the test itself.
  assert.ok(child.pid !== undefined, 'the child process started');
  const quota = limitCpu(child.pid, cpus, `hookd-test-threads-${process.pid}-${cpus}`);
  try {
    child.stdin.end('go\n');
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, out);
    return Number(out.trim());
  } finally {
    quota.remove();
  }
}

const quotaSkip = skipReason(cpuQuotaSkipReason());

describe('the default number of delivery threads', () => {
  it('is none on one core, where a thread would share the core with the loop', () => {
    assert.equal(threadsWith('0'), 0);
  });

  it('is the usable cores where there are two or more, and the variable overrides it', () => {
    const cores = availableParallelism();
    assert.ok(cores >= 2, 'the machine the suite runs on has two cores');
    assert.equal(threadsWith('0,1'), 2);
    assert.equal(threadsWith(undefined, { HOOKD_DELIVERY_THREADS: '3' }), 3);
    assert.equal(threadsWith('0', { HOOKD_DELIVERY_THREADS: 'auto' }), 0);
  });

  it('follows a CPU quota of its cgroup: a quota of one core or less is one core', {
    skip: quotaSkip,
  }, async () => {
    assert.ok(availableParallelism() >= 2, 'the machine the suite runs on has two cores');
    assert.equal(await threadsUnderQuota(0.4), 0);
    assert.equal(await threadsUnderQuota(1), 0);
    // A quota of 1.5 cores is rounded up: two cores' worth of threads.
    assert.equal(await threadsUnderQuota(1.5), 2);
  });
});
