import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { request } from 'node:http';

/** The worker processes of a primary: its children (the bench's reading of /proc). */
export { childrenOf } from '../../bench/lib/process.js';

function socketInodes(pid: number): Set<string> {
  const out = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

/** Inodes of the TCP sockets whose local port is `port` (from /proc/net/tcp and tcp6). */
function inodesOfLocalPort(port: number): string[] {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const out: string[] = [];
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(f, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && cols[1]!.endsWith(`:${hex}`)) out.push(cols[9]!);
    }
  }
  return out;
}

/**
 * Which of `pids` owns the TCP connection whose local port is `port`: the worker that proxied a
 * request, told by the port the upstream saw the request come from.
 */
export function ownerOfPort(pids: number[], port: number): number | undefined {
  const inodes = inodesOfLocalPort(port);
  for (const pid of pids) {
    const mine = socketInodes(pid);
    if (inodes.some((i) => mine.has(i))) return pid;
  }
  return undefined;
}

/** GET on a connection of its own (the kernel gives each new connection to one worker's socket). */
export function getFresh(url: string, path: string, timeoutMs = 0): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}
