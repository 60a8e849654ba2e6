/**
 * Fire latency: how long from a client sending a request that matches a hook until the callback
 * has reached its receiver, at a steady rate (default 1,000 callbacks/s).
 *
 * hookd runs on core 0 with the upstream, load generator and receiver on core 1. Each request
 * carries its send time (CLOCK_MONOTONIC, ns) as the path segment the hook captures; the hook's
 * CallbackContent is `$1`, so the callback body is that time and the receiver subtracts it from
 * its own monotonic clock (process.hrtime uses the same clock). The hooks are BeforeCompletion,
 * which fire on arrival: one with Persist true and one with Persist false, measured alternately.
 */
import { rmSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  calibrateDelay,
  delayFor,
  delayFunction,
  type LoadResult,
  loadTool,
  runAutocannon,
  runWrk,
} from './lib/load.js';
import { type HookdServer, startHookd, startUpstream, tempDir } from './lib/peers.js';
import { LOAD_CORE, SERVER_CORE, sleep } from './lib/process.js';
import { fmt, fmtSpread, percentiles, type Spread, spread, table } from './lib/stats.js';
import { ensureTools } from './setup.js';

export interface FireLatencyOptions {
  rounds: number;
  durationS: number;
  /** Triggering requests (= callbacks) per second. */
  rate: number;
  connections: number;
  warmupS: number;
  pin: boolean;
  tool?: 'wrk' | 'autocannon';
  /** Another build's bin/hookd.js, measured with the same hooks in the same rounds (before/after). */
  baselineBin?: string;
  /** More arguments for this build's hookd (`--adaptive-concurrency off`…), to isolate a cause. */
  hookdArgs?: string[];
  log?: (line: string) => void;
}

export interface FireContender {
  name: string;
  label: string;
  /** Set for the baseline build only. */
  baseline?: string;
  p50Ms: number[];
  p99Ms: number[];
  /** Callbacks received per second of run. */
  rate: number[];
  sent: number;
  received: number;
  summary: { p50Ms: Spread; p99Ms: Spread; rate: Spread };
}

export interface FireLatencyResult {
  tool: 'wrk' | 'autocannon';
  options: Omit<FireLatencyOptions, 'log'>;
  contenders: FireContender[];
  skipped: string[];
}

// CLOCK_MONOTONIC (1 on Linux) through LuaJIT's FFI: wrk builds the path just before writing.
const fireScript = (prefix: string, delayMs: number): string => `
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } hookd_bench_ts;
int clock_gettime(int clk, hookd_bench_ts *tp);
]]
local ts = ffi.new("hookd_bench_ts")
${delayFunction(delayMs)}function request()
  ffi.C.clock_gettime(1, ts)
  return wrk.format("GET", "${prefix}" .. string.format("%d%09d", tonumber(ts.tv_sec), tonumber(ts.tv_nsec)))
end
`;

interface Receiver {
  server: HttpServer;
  url: string;
  samples: Map<string, number[]>;
}

async function startReceiver(): Promise<Receiver> {
  const samples = new Map<string, number[]>();
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('latin1');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      const now = process.hrtime.bigint();
      res.writeHead(200, { 'content-length': '0' });
      res.end();
      if (!/^\d+$/.test(body)) return;
      const list = samples.get(req.url ?? '');
      list?.push(Number(now - BigInt(body)) / 1e6);
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, samples };
}

async function createHook(h: HookdServer, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${h.url}/hooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`creating a hook answered ${res.status}: ${await res.text()}`);
}

/** Waits until `list` stops growing (callbacks still in flight at the end of a run). */
async function settle(list: number[], expected: number, maxMs = 5000): Promise<void> {
  const deadline = Date.now() + maxMs;
  let last = -1;
  while (Date.now() < deadline && list.length < expected) {
    if (list.length === last) break;
    last = list.length;
    await sleep(300);
  }
}

/** Measures trigger-to-receive latency; see the module comment. */
export async function runFireLatencyBench(opts: FireLatencyOptions): Promise<FireLatencyResult> {
  const log = opts.log ?? (() => {});
  let tool = loadTool(opts.tool);
  const stops: (() => Promise<void>)[] = [];
  const dir = tempDir('fire');
  const receiver = await startReceiver();
  const skipped: string[] = [];
  try {
    const upstream = await startUpstream(opts.pin ? LOAD_CORE : undefined);
    stops.push(upstream.stop);
    const builds: { tag: string; bin?: string; args?: string[] }[] = [
      { tag: '', ...(opts.hookdArgs && { args: opts.hookdArgs }) },
      ...(opts.baselineBin ? [{ tag: 'baseline', bin: opts.baselineBin }] : []),
    ];
    const kinds: { name: string; label: string; persist: boolean; hookd: HookdServer; baseline?: string }[] =
      [];
    for (const b of builds) {
      // One hookd per build, each on the server core in turn: they are never loaded at once.
      const hookd = await startHookd({
        core: opts.pin ? SERVER_CORE : undefined,
        dataDir: `${dir}/${b.tag || 'this'}`,
        upstream: upstream.url,
        ...(b.bin && { bin: b.bin }),
        ...(b.args && { extraArgs: b.args }),
      });
      stops.push(hookd.stop);
      for (const persist of [true, false]) {
        const name = `${persist ? 'durable' : 'memory'}${b.tag && `-${b.tag}`}`;
        const label = `Persist: ${persist}${b.bin ? ` (baseline ${b.bin})` : ''}`;
        kinds.push({ name, label, persist, hookd, ...(b.bin && { baseline: b.bin }) });
      }
    }
    for (const k of kinds) {
      receiver.samples.set(`/${k.name}`, []);
      await createHook(k.hookd, {
        PathPattern: `/fire-${k.name}/(*)`,
        Callback: `${receiver.url}/${k.name}`,
        Methods: ['GET'],
        Type: 0,
        CallbackContent: '$1',
        CallbackContentMediaType: 'text/plain',
        Persist: k.persist,
      });
    }

    const delays = new Map(kinds.map((k) => [k.name, delayFor(opts.rate, opts.connections)]));
    const fire = async (name: string, durationS: number): Promise<LoadResult> => {
      const hookd = kinds.find((k) => k.name === name)!.hookd;
      const prefix = `/fire-${name}/`;
      const load = { connections: opts.connections, durationS, pin: opts.pin, tool };
      if (tool === 'wrk') {
        try {
          return (await runWrk(hookd.url, load, fireScript(prefix, delays.get(name)!))).result;
        } catch (err) {
          // A wrk built without LuaJIT has no FFI for the clock: autocannon can do it in-process.
          skipped.push(
            `wrk could not run the timing script (${(err as Error).message.slice(0, 120)}); used autocannon`,
          );
          tool = 'autocannon';
        }
      }
      return runAutocannon(hookd.url, {
        ...load,
        tool: 'autocannon',
        overallRate: opts.rate,
        requests: [{ setupRequest: (req) => ({ ...req, path: prefix + process.hrtime.bigint() }) }],
      });
    };

    for (const k of opts.warmupS > 0 ? kinds : []) {
      log(`fire: warming up ${k.label}`);
      const warm = await fire(k.name, opts.warmupS);
      await settle(receiver.samples.get(`/${k.name}`)!, Number.POSITIVE_INFINITY);
      // The warm-up also calibrates the pacing, so that the measured runs get the rate asked for.
      delays.set(k.name, calibrateDelay(opts.rate, opts.connections, delays.get(k.name)!, warm.rps));
    }
    const results = kinds.map((k) => ({
      name: k.name,
      label: k.label,
      ...(k.baseline && { baseline: k.baseline }),
      p50Ms: [] as number[],
      p99Ms: [] as number[],
      rate: [] as number[],
      sent: 0,
      received: 0,
    }));
    for (let round = 0; round < opts.rounds; round++) {
      const order = round % 2 === 0 ? results : [...results].reverse();
      for (const r of order) {
        const list = receiver.samples.get(`/${r.name}`)!;
        list.length = 0;
        const used = delays.get(r.name)!;
        const load = await fire(r.name, opts.durationS);
        // Re-calibrated after every run: the rate drifts with what else the machine is doing.
        delays.set(r.name, calibrateDelay(opts.rate, opts.connections, used, load.rps));
        await settle(list, load.requests);
        // The first requests of an autocannon run were built before it started: drop them.
        const got = list.filter((x) => x >= 0);
        const p = percentiles(got);
        r.p50Ms.push(p.p50);
        r.p99Ms.push(p.p99);
        r.rate.push(got.length / load.seconds);
        r.sent += load.requests;
        r.received += got.length;
        log(`fire: round ${round + 1} ${r.label}: p50 ${p.p50.toFixed(2)} ms, p99 ${p.p99.toFixed(2)} ms`);
      }
    }
    const { log: _log, ...options } = opts;
    return {
      tool,
      options,
      contenders: results.map((r) => ({
        ...r,
        summary: { p50Ms: spread(r.p50Ms), p99Ms: spread(r.p99Ms), rate: spread(r.rate) },
      })),
      skipped,
    };
  } finally {
    await Promise.all(stops.map((stop) => stop().catch(() => undefined)));
    receiver.server.closeAllConnections();
    await new Promise((r) => receiver.server.close(r));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The results as a Markdown table with notes. */
export function formatFireLatency(r: FireLatencyResult): string {
  const ms = (n: number) => fmt(n, 2);
  const rows = r.contenders.map((c) => [
    c.label,
    fmtSpread(c.summary.rate, (n) => fmt(n, 0)),
    fmtSpread(c.summary.p50Ms, ms),
    fmtSpread(c.summary.p99Ms, ms),
    `${c.received.toLocaleString('en-US')} / ${c.sent.toLocaleString('en-US')}`,
  ]);
  const o = r.options;
  const notes = [
    `${r.tool}, ${o.connections} connections paced to ~${o.rate}/s, ${o.rounds} alternating rounds of ${o.durationS} s; ` +
      'one BeforeCompletion hook per row; latency = callback fully received − request sent (same monotonic clock).',
    ...r.skipped.map((s) => `Note: ${s}`),
  ];
  return `${table(['hook', 'callbacks/s (min–max)', 'p50 ms (min–max)', 'p99 ms (min–max)', 'received / sent'], rows)}\n\n${notes.map((n) => `- ${n}`).join('\n')}`;
}

function parseArgs(argv: string[]): FireLatencyOptions & { setup: boolean } {
  const o: FireLatencyOptions & { setup: boolean } = {
    setup: true,
    rounds: 5,
    durationS: 5,
    rate: 1000,
    connections: 50,
    warmupS: 3,
    pin: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = argv[i + 1];
    if (a === '--rounds') o.rounds = Number(argv[++i]);
    else if (a === '--seconds') o.durationS = Number(argv[++i]);
    else if (a === '--rate') o.rate = Number(argv[++i]);
    else if (a === '--connections') o.connections = Number(argv[++i]);
    else if (a === '--warmup') o.warmupS = Number(argv[++i]);
    else if (a === '--no-pin') o.pin = false;
    else if (a === '--no-setup') o.setup = false;
    else if (a === '--baseline' && v !== undefined) o.baselineBin = resolve(argv[++i]!);
    else if (a === '--hookd-arg' && v !== undefined) {
      o.hookdArgs = [...(o.hookdArgs ?? []), ...v.split(' ')];
      i++;
    } else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

// Run: `node dist/bench/fire-latency.js [--rounds 5] [--seconds 5] [--rate 1000] [--baseline /old/bin/hookd.js]
// [--hookd-arg '--adaptive-concurrency off'] [--no-setup]`.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const opts = parseArgs(process.argv.slice(2));
  // Run alone, the bench sets up wrk as `npm run bench` does: autocannon stamps a request when it
  // builds it, before its own pacing holds it back, so its latencies are the generator's queue.
  const tools = ensureTools({ install: opts.setup, log: (l) => console.error(l) });
  for (const m of tools.messages) console.error(`setup: ${m}`);
  const { setup: _setup, ...bench } = opts;
  const r = await runFireLatencyBench({ ...bench, log: (l) => console.error(l) });
  console.log(formatFireLatency(r));
}
