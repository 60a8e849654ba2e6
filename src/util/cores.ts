/**
 * The cores this process may use: the CPUs it may run on, lowered to its cgroup's CPU quota
 * (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us`, the tightest of its cgroup and their parents), so
 * that a container limited to two CPUs on a 64-core host counts two.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { posix } from 'node:path';

export function usableCores(root = '/sys/fs/cgroup', self = '/proc/self/cgroup'): number {
  const cpus = availableParallelism();
  const quota = cgroupQuota(root, self);
  return quota === undefined ? cpus : Math.max(1, Math.min(cpus, Math.ceil(quota)));
}

/** The CPU quota in cores (1.5 for `150000 100000`), or undefined when none applies or none can be read. */
export function cgroupQuota(root: string, self: string): number | undefined {
  let lines: string[];
  try {
    lines = readFileSync(self, 'utf8').split('\n');
  } catch {
    return undefined;
  }
  let tightest: number | undefined;
  const take = (q: number | undefined) => {
    if (q !== undefined && (tightest === undefined || q < tightest)) tightest = q;
  };
  for (const line of lines) {
    // `hierarchy-id:controllers:path`; the path may itself hold colons.
    const [id, controllers, ...rest] = line.split(':');
    if (id === undefined || controllers === undefined || rest.length === 0) continue;
    const path = rest.join(':');
    if (id === '0' && controllers === '') {
      for (const dir of upFrom(posix.join(root, path), root)) take(v2Quota(dir));
    } else if (controllers.split(',').includes('cpu')) {
      const base = [posix.join(root, controllers), posix.join(root, 'cpu'), posix.join(root, 'cpu,cpuacct')];
      for (const b of base) for (const dir of upFrom(posix.join(b, path), b)) take(v1Quota(dir));
    }
  }
  return tightest;
}

/** `dir` and each of its parents up to `top`, nearest first. */
function* upFrom(dir: string, top: string): Generator<string> {
  let d = dir;
  for (;;) {
    yield d;
    if (d === top || d.length <= top.length) return;
    d = posix.dirname(d);
  }
}

function v2Quota(dir: string): number | undefined {
  const text = readOr(posix.join(dir, 'cpu.max'));
  if (text === undefined) return undefined;
  const [quota, period] = text.trim().split(/\s+/);
  if (quota === undefined || quota === 'max') return undefined;
  return ratio(Number(quota), Number(period ?? 100_000));
}

function v1Quota(dir: string): number | undefined {
  const quota = readOr(posix.join(dir, 'cpu.cfs_quota_us'));
  const period = readOr(posix.join(dir, 'cpu.cfs_period_us'));
  if (quota === undefined || period === undefined) return undefined;
  return ratio(Number(quota.trim()), Number(period.trim()));
}

function ratio(quota: number, period: number): number | undefined {
  if (!Number.isFinite(quota) || quota <= 0 || !Number.isFinite(period) || period <= 0) return undefined;
  return quota / period;
}

function readOr(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
