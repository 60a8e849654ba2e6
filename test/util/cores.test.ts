import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { cgroupQuota, usableCores } from '../../src/util/cores.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A cgroup file tree and a /proc/self/cgroup of its own, as the kernel lays them out. */
function tree(files: Record<string, string>, self: string): { root: string; self: string } {
  const dir = mkdtempSync(join(tmpdir(), 'hookd-cgroup-'));
  dirs.push(dir);
  const root = join(dir, 'sys');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const selfFile = join(dir, 'cgroup');
  writeFileSync(selfFile, self);
  return { root, self: selfFile };
}

describe('the usable cores', () => {
  it('read a cgroup v2 quota, the tightest of the cgroup and its parents', () => {
    const t = tree(
      { 'cpu.max': 'max 100000\n', 'app/cpu.max': '300000 100000\n', 'app/hookd/cpu.max': '150000 100000\n' },
      '0::/app/hookd\n',
    );
    assert.equal(cgroupQuota(t.root, t.self), 1.5);
    const loose = tree(
      { 'app/cpu.max': '50000 100000\n', 'app/hookd/cpu.max': 'max 100000\n' },
      '0::/app/hookd\n',
    );
    assert.equal(cgroupQuota(loose.root, loose.self), 0.5, "a parent's quota applies");
  });

  it('read a cgroup v1 quota from the cpu controller, and none where it is -1', () => {
    const t = tree(
      {
        'cpu,cpuacct/docker/abc/cpu.cfs_quota_us': '250000\n',
        'cpu,cpuacct/docker/abc/cpu.cfs_period_us': '100000\n',
      },
      '12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n',
    );
    assert.equal(cgroupQuota(t.root, t.self), 2.5);
    const none = tree({ 'cpu/cpu.cfs_quota_us': '-1\n', 'cpu/cpu.cfs_period_us': '100000\n' }, '1:cpu:/\n');
    assert.equal(cgroupQuota(none.root, none.self), undefined);
  });

  it('round a quota up, never below one core nor above the CPUs', () => {
    const half = tree({ 'cpu.max': '50000 100000\n' }, '0::/\n');
    assert.equal(usableCores(half.root, half.self), 1);
    const many = tree({ 'cpu.max': '6400000 100000\n' }, '0::/\n');
    assert.equal(usableCores(many.root, many.self), availableParallelism());
    assert.equal(
      usableCores(join(tmpdir(), 'no-such-cgroup'), join(tmpdir(), 'no-such-self')),
      availableParallelism(),
    );
  });

  it("count this machine's cores as at most its CPUs", () => {
    const n = usableCores();
    assert.ok(n >= 1 && n <= availableParallelism(), String(n));
  });
});
