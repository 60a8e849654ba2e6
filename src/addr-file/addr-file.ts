/**
 * `<data-dir>/hookd.addr`: the API address of the daemon that runs on this data dir and its pid,
 * written once it listens and removed when it stops cleanly. A file left by a daemon that did not
 * stop cleanly is stale: its pid is not alive, or its address does not answer.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const ADDR_FILE = 'hookd.addr';

export interface DaemonAddress {
  /** The API's base URL, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  readonly pid: number;
}

/** Writes the file for this process (atomically: a reader never sees half of it). */
export function writeAddrFile(dataDir: string, url: string, pid: number = process.pid): void {
  const file = join(dataDir, ADDR_FILE);
  const tmp = `${file}.${pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ url, pid })}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

/** Removes the file if this process wrote it (another daemon's is left alone). */
export function removeAddrFile(dataDir: string, pid: number = process.pid): void {
  const found = readAddrFile(dataDir);
  if (found !== undefined && found.pid === pid) rmSync(join(dataDir, ADDR_FILE), { force: true });
}

function readAddrFile(dataDir: string): DaemonAddress | undefined {
  try {
    const v = JSON.parse(readFileSync(join(dataDir, ADDR_FILE), 'utf8')) as Partial<DaemonAddress>;
    if (typeof v.url !== 'string' || typeof v.pid !== 'number') return undefined;
    return { url: v.url, pid: v.pid };
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, under another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether something answers HTTP at the address within the time limit (any status will do). */
async function answers(url: string, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetch(`${url}/_hookd/users`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

/** The running daemon's address, or undefined when none runs (no file, or a stale one). */
export async function readLiveAddress(dataDir: string, timeoutMs = 2000): Promise<DaemonAddress | undefined> {
  const found = readAddrFile(dataDir);
  if (found === undefined || !alive(found.pid)) return undefined;
  return (await answers(found.url, timeoutMs)) ? found : undefined;
}
