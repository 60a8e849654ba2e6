/**
 * What tracing costs on the proxy path: hookd with tracing off against a baseline
 * build from before tracing existed (`--baseline BIN`, e.g. a build of the merge base), and
 * hookd with tracing on, exporting every proxied request's span over OTLP/HTTP to a sink that
 * accepts and drops them. Same hooks (non-matching) in each; short saturation runs (wrk),
 * interleaved, the order rotating per round; requests/s and server CPU per request.
 *
 *   node dist/bench/tracing.js [--baseline BIN] [--rounds 5] [--seconds 3] [--hooks 1000] [--no-pin]
 */

import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { saturate } from './lib/load.js';
import { BENCH_PATH, type HookdServer, startHookd, startUpstream, tempDir } from './lib/peers.js';
import { canPin, cpuSeconds, LOAD_CORE, SERVER_CORE, sleep } from './lib/process.js';
import { seedHooks } from './lib/seed-hooks.js';
import { fmt, fmtSpread, ratio, spread, table } from './lib/stats.js';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
};
const rounds = Number(arg('--rounds') ?? 5);
const seconds = Number(arg('--seconds') ?? 3);
const hooks = Number(arg('--hooks') ?? 1000);
const baseline = arg('--baseline');
const pin = !process.argv.includes('--no-pin') && canPin();
const serverCore = pin ? SERVER_CORE : undefined;
const loadCore = pin ? LOAD_CORE : undefined;

// The OTLP sink: reads and drops every export (on the load side, like the upstream).
let exports = 0;
const sink = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    exports++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/v1/traces`;

const stops: (() => Promise<void>)[] = [];
const dirs: string[] = [];
try {
  const upstream = await startUpstream(loadCore);
  stops.push(upstream.stop);
  const contenders: { name: string; server: HookdServer }[] = [];
  const add = async (name: string, extraArgs: string[] = [], bin?: string) => {
    const dataDir = tempDir(`trace-${name}`);
    dirs.push(dataDir);
    await seedHooks(dataDir, hooks);
    const server = await startHookd({
      core: serverCore,
      dataDir,
      upstream: upstream.url,
      extraArgs,
      ...(bin && { bin }),
    });
    stops.push(server.stop);
    contenders.push({ name, server });
  };
  if (baseline) await add('baseline (before tracing)', [], baseline);
  await add('tracing off');
  await add('tracing on', ['--tracing', 'on', '--tracing-endpoint', sinkUrl]);
  const load = { connections: 50, durationS: seconds, pin };
  for (const c of contenders) await saturate(c.server.url + BENCH_PATH, { ...load, durationS: 2 });

  const rps = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const cpu = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!);
    for (const c of order) {
      const pid = c.server.running.pid;
      const c0 = cpuSeconds(pid);
      const r = await saturate(c.server.url + BENCH_PATH, load);
      const c1 = cpuSeconds(pid);
      if (r.errors > 0 || r.non2xx > 0) throw new Error(`${c.name}: ${r.errors} errors, ${r.non2xx} non-2xx`);
      rps.get(c.name)!.push(r.rps);
      cpu.get(c.name)!.push(((c1 - c0) / r.requests) * 1e6);
      console.error(`round ${round + 1} ${c.name}: ${r.rps.toFixed(0)} req/s`);
      await sleep(200);
    }
  }
  const off = 'tracing off';
  const rows = contenders.map((c) => [
    c.name,
    fmtSpread(spread(rps.get(c.name)!), (n) => fmt(n, 0)),
    fmtSpread(spread(cpu.get(c.name)!), (n) => fmt(n, 0)),
    c.name === off ? '1' : fmtSpread(ratio(rps.get(c.name)!, rps.get(off)!), (n) => fmt(n, 3)),
  ]);
  console.log(
    table(['hookd', 'req/s median (min–max)', 'server CPU µs/request', 'req/s vs tracing off'], rows),
  );
  console.log(
    `\n${rounds} interleaved rounds of ${seconds} s, wrk 50 connections, ${hooks} non-matching hooks, ` +
      `${pin ? 'hookd pinned to core 0, load and upstream on core 1' : 'not pinned'}; ` +
      `${exports} OTLP exports received by the sink.`,
  );
} finally {
  await Promise.all(stops.map((s) => s().catch(() => undefined)));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  sink.close();
}
