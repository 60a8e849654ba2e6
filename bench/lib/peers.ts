/**
 * The processes a benchmark talks to: the upstream (a Node `http` server answering a small JSON
 * body), nginx as the reference proxy, and hookd itself, each a real separate process pinned to
 * its core so that its CPU use is its own.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageInfo } from '../../src/util/package-info.js';
import { writeNginxConf } from './nginx-conf.js';
import { type Running, sleep, start } from './process.js';

/** The repository root, whether the bench runs from dist/ or through tsx. */
export const REPO_ROOT = packageInfo().root;

export const HOOKD_BIN = join(REPO_ROOT, 'bin', 'hookd.js');

/** The request path every proxy run asks for (the seed's time series; no bench hook matches it). */
export const BENCH_PATH = '/repositories/r1/timeseries/ts1';

/** A temporary directory for one benchmark's state. */
export const tempDir = (prefix: string): string => mkdtempSync(join(tmpdir(), `hookd-bench-${prefix}-`));

export interface Server {
  url: string;
  port: number;
  running: Running;
  stop(): Promise<void>;
}

// Kept as source text so the upstream needs no build step and loads nothing but `http`.
const UPSTREAM_SOURCE = `
const http = require('node:http');
const body = JSON.stringify({ Id: 'ts1', Repository: 'r1', Name: 'temperature', Unit: 'degC', Points: 1440, Modified: '2026-11-22T12:00:00.000+00:00' });
const len = Buffer.byteLength(body);
const server = http.createServer({ keepAliveTimeout: 65000 }, (req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': len });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;

/** Starts the upstream on `core`. */
export async function startUpstream(core: number | undefined): Promise<Server> {
  const running = await start(process.execPath, ['-e', UPSTREAM_SOURCE], {
    core,
    ready: (l) => l.startsWith('port '),
  });
  const port = Number(running.lines.find((l) => l.startsWith('port '))!.slice(5));
  return { url: `http://127.0.0.1:${port}`, port, running, stop: () => running.stop() };
}

// The floor for any proxy built on Node's http server and undici: no hooks, no header rules beyond
// dropping Connection, no metrics, no X-Forwarded-*; the response goes straight from undici's
// dispatch handler into the client's response (as hookd's does). Source text, like the upstream.
const BARE_PROXY_SOURCE = `
const http = require('node:http');
const { Pool } = require(process.env.UNDICI_PATH);
const pool = new Pool(process.env.UPSTREAM, { connections: 128, pipelining: 1, keepAliveTimeout: 30000 });
const server = http.createServer({ keepAliveTimeout: 65000 }, (req, res) => {
  const raw = req.rawHeaders;
  const headers = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() !== 'connection') headers.push(raw[i], raw[i + 1]);
  pool.dispatch({ path: req.url, method: req.method, headers, body: null }, {
    onRequestStart() {},
    onResponseStart(controller, status) {
      const rawHeaders = controller.rawHeaders;
      const out = [];
      for (let i = 0; i < rawHeaders.length; i += 2) {
        const name = rawHeaders[i].toString('latin1');
        if (name.toLowerCase() !== 'connection' && name.toLowerCase() !== 'keep-alive') out.push(name, rawHeaders[i + 1].toString('latin1'));
      }
      res.writeHead(status, out);
    },
    onResponseData(controller, chunk) {
      if (!res.write(chunk)) { controller.pause(); res.once('drain', () => controller.resume()); }
    },
    onResponseEnd() { res.end(); },
    onResponseError(controller, err) { res.destroy(err); },
  });
});
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;

/**
 * A minimal Node reverse proxy (Node http + undici `Pool.dispatch`) on `core`: what the platform
 * costs before any of hookd's work, so that hookd's distance from nginx splits into the part that
 * is hookd's and the part that is Node's. GET requests only (the bench sends nothing else).
 */
export async function startBareNodeProxy(core: number | undefined, upstreamUrl: string): Promise<Server> {
  const undici = createRequire(join(REPO_ROOT, 'package.json')).resolve('undici');
  const running = await start(process.execPath, ['-e', BARE_PROXY_SOURCE], {
    core,
    env: { ...process.env, UPSTREAM: upstreamUrl, UNDICI_PATH: undici },
    ready: (l) => l.startsWith('port '),
  });
  const port = Number(running.lines.find((l) => l.startsWith('port '))!.slice(5));
  return { url: `http://127.0.0.1:${port}`, port, running, stop: () => running.stop() };
}

/** A port that was free a moment ago (nginx needs its port in the config file). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on the port. */
export async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/**
 * nginx as a reverse proxy with upstream keep-alive, one worker, in the foreground with its own
 * prefix and config: the system nginx is never touched. It sets the same X-Forwarded-* headers
 * as hookd, and keep-alive limits are raised so that neither side reconnects during a run.
 */
export async function startNginx(core: number | undefined, upstreamPort: number): Promise<Server> {
  const dir = tempDir('nginx');
  const port = await freePort();
  writeNginxConf(
    dir,
    4096,
    `  keepalive_requests 1000000;
  upstream app {
    server 127.0.0.1:${upstreamPort};
    keepalive 64;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $host;
    }
  }`,
  );
  const running = await start(
    'nginx',
    ['-p', dir, '-e', join(dir, 'error.log'), '-c', 'nginx.conf', '-g', 'daemon off;'],
    {
      core,
    },
  );
  try {
    await waitForPort(port);
  } catch (err) {
    await running.stop();
    const log = existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '';
    throw new Error(`${(err as Error).message}: ${running.stderr()} ${log}`);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    running,
    stop: async () => {
      await running.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface HookdServer extends Server {
  dataDir: string;
  /** The admin token bootstrap wrote into the data dir. */
  token: string;
  /** Milliseconds from spawn to the `listening` log line. */
  startMs: number;
  /** The web console's own origin (its listener on a free port); '' when a build has none. */
  consoleUrl: string;
}

export interface HookdStart {
  core: number | undefined;
  dataDir: string;
  upstream?: string;
  /** Directory for a V8 CPU profile (`node --cpu-prof`), written when hookd exits. */
  cpuProfDir?: string;
  extraArgs?: string[];
  /** Another build's bin/hookd.js (a before/after comparison); default this checkout's. */
  bin?: string;
  /** Generous for 100,000 persisted hooks on a busy machine. */
  timeoutMs?: number;
}

/** A real hookd process (bin/hookd.js, the built dist/), listening on a random loopback port. */
export async function startHookd(opts: HookdStart): Promise<HookdServer> {
  if (!opts.bin && !existsSync(join(REPO_ROOT, 'dist', 'src', 'hookd-cli', 'main.js'))) {
    throw new Error('dist/ is not built: run `npm run build` (npm run bench does) first');
  }
  const nodeArgs = opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir] : [];
  const args = [
    ...nodeArgs,
    opts.bin ?? HOOKD_BIN,
    '--data-dir',
    opts.dataDir,
    '--listen',
    '127.0.0.1:0',
    '--allow-callback-net',
    '127.0.0.0/8',
    ...(opts.upstream ? ['--upstream', opts.upstream] : []),
    ...(opts.extraArgs ?? []),
  ];
  let url = '';
  let consoleUrl = '';
  const t0 = process.hrtime.bigint();
  const running = await start(process.execPath, args, {
    core: opts.core,
    // info: the `listening` line is the readiness signal (and hookd's default level).
    // The operations listener on a free port (a variable, so that an older --bin ignores it).
    env: {
      ...process.env,
      HOOKD_LOG_LEVEL: 'info',
      HOOKD_OPS_LISTEN: '127.0.0.1:0',
      HOOKD_CONSOLE_LISTEN: '127.0.0.1:0',
    },
    timeoutMs: opts.timeoutMs ?? 60_000,
    ready: (line) => {
      try {
        const rec = JSON.parse(line) as { msg?: string; url?: string; consoleUrl?: string | null };
        if (rec.msg === 'listening' && rec.url) {
          url = rec.url;
          consoleUrl = rec.consoleUrl ?? '';
          return true;
        }
      } catch {
        // not a log record
      }
      return false;
    },
  });
  const startMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const token = readFileSync(join(opts.dataDir, 'admin.token'), 'utf8').trim();
  return {
    url,
    port: Number(new URL(url).port),
    running,
    dataDir: opts.dataDir,
    token,
    startMs,
    consoleUrl,
    stop: () => running.stop(15_000),
  };
}
