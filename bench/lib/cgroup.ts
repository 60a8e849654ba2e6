import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A CPU quota for one process, in a cgroup of its own: cgroup v2's `cpu.max` where the unified
 * hierarchy has the cpu controller, else v1's `cpu.cfs_quota_us`. With a quota per instance the
 * instances, not the two shared cores, are the limit, so that scale-out can be seen at all.
 */
export interface CpuQuota {
  /** Where the process was put. */
  path: string;
  remove(): void;
}

const PERIOD_US = 100_000;

/** Why quotas cannot be set here, or undefined when they can. */
export function cpuQuotaSkipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'CPU quotas need root (cgroups)';
  if (!v2Root() && !existsSync('/sys/fs/cgroup/cpu/cpu.cfs_quota_us'))
    return 'no cgroup cpu controller found';
  return undefined;
}

function v2Root(): string | undefined {
  const root = '/sys/fs/cgroup';
  try {
    return readText(join(root, 'cgroup.controllers')).split(/\s+/).includes('cpu') ? root : undefined;
  } catch {
    return undefined;
  }
}

const readText = (file: string): string => readFileSync(file, 'utf8');

/** Limits `pid` (and the threads and children it makes later) to `cpus` of one core (0.25 = 25 %). */
export function limitCpu(pid: number, cpus: number, name: string): CpuQuota {
  const quota = Math.max(1000, Math.round(cpus * PERIOD_US));
  const v2 = v2Root();
  if (v2) {
    const path = join(v2, name);
    mkdirSync(path, { recursive: true });
    writeFileSync(join(path, 'cpu.max'), `${quota} ${PERIOD_US}`);
    writeFileSync(join(path, 'cgroup.procs'), String(pid));
    return { path, remove: () => tryRemove(path, join(v2, 'cgroup.procs')) };
  }
  const root = '/sys/fs/cgroup/cpu';
  const path = join(root, name);
  mkdirSync(path, { recursive: true });
  writeFileSync(join(path, 'cpu.cfs_period_us'), String(PERIOD_US));
  writeFileSync(join(path, 'cpu.cfs_quota_us'), String(quota));
  writeFileSync(join(path, 'cgroup.procs'), String(pid));
  return { path, remove: () => tryRemove(path, join(root, 'cgroup.procs')) };
}

function tryRemove(path: string, parentProcs: string): void {
  // A cgroup can only go once it is empty: move any process still in it back to the parent.
  try {
    for (const p of readText(join(path, 'cgroup.procs')).split('\n').filter(Boolean)) {
      try {
        writeFileSync(parentProcs, p);
      } catch {
        // exited meanwhile
      }
    }
    rmdirSync(path);
  } catch {
    // already gone, or still busy: the kernel removes nothing, a later run reuses the name
  }
}
