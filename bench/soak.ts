/**
 * The soak: hookd in front of an upstream, many hooks, a steady rate of proxied requests of which
 * each fires a few callbacks, for a long time. It samples hookd's RSS and V8 heap from outside
 * (/proc and the ops listener's metrics) and counts every callback at the receiver, so that a
 * slow growth of memory and a lost callback both show. With `--snapshots`, hookd writes heap
 * snapshots on SIGUSR2 at the start and the end of the run, to compare what grew.
 *
 *   node dist/bench/soak.js --seconds 3600 --rate 200 --hooks 500 --matching 5
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '300' },
    rate: { type: 'string', default: '200' },
    hooks: { type: 'string', default: '500' },
    matching: { type: 'string', default: '5' },
    paths: { type: 'string', default: '100' },
    every: { type: 'string', default: '30' },
    snapshots: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const rate = Number(values.rate);
const hookCount = Number(values.hooks);
const matching = Number(values.matching);
const pathCount = Number(values.paths);
const everyS = Number(values.every);

function listen(s: Server): Promise<number> {
  return new Promise((r) => s.listen(0, '127.0.0.1', () => r((s.address() as AddressInfo).port)));
}

let received = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    received++;
    res.writeHead(200).end();
  });
});
const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
});
const receiverPort = await listen(receiver);
const upstreamPort = await listen(upstream);

const dataDir = mkdtempSync(join(tmpdir(), 'hookd-soak-'));
const hookd = spawn(
  process.execPath,
  [
    ...(values.snapshots ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dataDir}`] : []),
    join(import.meta.dirname, '..', '..', 'bin', 'hookd.js'),
    '--data-dir',
    dataDir,
    '--listen',
    '127.0.0.1:0',
    '--ops-listen',
    '127.0.0.1:0',
    '--console-listen',
    'off',
    '--upstream',
    `http://127.0.0.1:${upstreamPort}`,
    '--allow-callback-net',
    '127.0.0.0/8',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, HOOKD_LOG_LEVEL: 'info' } },
);
const { url, opsUrl } = await new Promise<{ url: string; opsUrl: string }>((resolve, reject) => {
  hookd.once('exit', (code) => reject(new Error(`hookd exited with ${code}`)));
  createInterface({ input: hookd.stdout! }).on('line', (line) => {
    try {
      const rec = JSON.parse(line) as { msg?: string; url?: string; opsUrl?: string };
      if (rec.msg === 'listening' && rec.url) resolve({ url: rec.url, opsUrl: rec.opsUrl ?? '' });
    } catch {
      // pretty or partial lines carry nothing the soak needs
    }
  });
});
const token = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
const agent = new Agent({ connections: 64 });

async function call(method: string, path: string, body?: unknown): Promise<number> {
  const r = await request(`${url}${path}`, {
    method: method as 'POST',
    dispatcher: agent,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  await r.body.dump();
  return r.statusCode;
}

// `matching` hooks watch every soak path; the rest watch paths no request takes.
for (let i = 0; i < hookCount; i++) {
  const hot = i < matching;
  const status = await call('POST', '/hooks', {
    PathPattern: hot ? '/soak/(*)' : `/cold/${i}/(*)`,
    Methods: ['GET'],
    Callback: `http://127.0.0.1:${receiverPort}/cb/${i}`,
  });
  if (status !== 201) throw new Error(`hook ${i}: ${status}`);
}

function rssMiB(): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${hookd.pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

async function heapMiB(): Promise<number> {
  const r = await request(`${opsUrl}/metrics`, { dispatcher: agent });
  const text = await r.body.text();
  const m = /^(?:hookd_)?nodejs_heap_size_used_bytes\s+([\d.e+]+)/m.exec(text);
  return m ? Number(m[1]) / 2 ** 20 : Number.NaN;
}

/** RSS by kind of mapping (MiB): file-backed (SQLite's files, code), anonymous (malloc, V8). */
function mappings(): { fileMiB: number; anonMiB: number; walMiB: number } {
  let file = 0;
  let anon = 0;
  let wal = 0;
  let current = '';
  for (const line of readFileSync(`/proc/${hookd.pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      current = head[1] ?? '';
      continue;
    }
    const m = /^Rss:\s+(\d+) kB/.exec(line);
    if (!m) continue;
    const kb = Number(m[1]);
    if (current.startsWith('/')) {
      file += kb;
      if (current.endsWith('-wal') || current.endsWith('-shm')) wal += kb;
    } else anon += kb;
  }
  return {
    fileMiB: Math.round(file / 1024),
    anonMiB: Math.round(anon / 1024),
    walMiB: Math.round(wal / 1024),
  };
}

let sent = 0;
let failed = 0;
const started = performance.now();
const samples: {
  t: number;
  rssMiB: number;
  heapMiB: number;
  received: number;
  fileMiB: number;
  anonMiB: number;
  walMiB: number;
}[] = [];
if (values.snapshots) hookd.kill('SIGUSR2');
let nextSample = everyS;
const interval = 1000 / rate;
let due = performance.now();
while (performance.now() - started < seconds * 1000) {
  due += interval;
  const n = sent++;
  request(`${url}/soak/p${n % pathCount}`, { dispatcher: agent })
    .then((r) => r.body.dump())
    .catch(() => {
      failed++;
    });
  const t = (performance.now() - started) / 1000;
  if (t >= nextSample) {
    nextSample += everyS;
    samples.push({
      t: Math.round(t),
      rssMiB: Math.round(rssMiB()),
      heapMiB: Math.round(await heapMiB()),
      received,
      ...mappings(),
    });
    console.log(JSON.stringify(samples.at(-1)));
  }
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
const expected = sent * matching;
const deadline = performance.now() + 60_000;
while (received < expected && performance.now() < deadline) await new Promise((r) => setTimeout(r, 200));
if (values.snapshots) {
  hookd.kill('SIGUSR2');
  await new Promise((r) => setTimeout(r, 5000));
}
console.log(
  JSON.stringify({ sent, failed, expected, received, lost: expected - received, samples, dataDir }),
);
hookd.kill('SIGTERM');
await new Promise((r) => hookd.once('exit', r));
await agent.close();
receiver.close();
upstream.close();
