import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../helpers/hookd.js';

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
});
