/**
 * Proxy benchmark: requests/s and latency on loopback for the upstream directly, hookd with no
 * hooks, hookd with N non-matching hooks, and nginx `proxy_pass` with upstream keep-alive.
 *
 * Layout on two cores (PERF-NOTES): the server under test (the upstream for the direct run,
 * otherwise hookd or nginx) alone on core 0; the load generator and, for proxied runs, the
 * upstream on core 1. Every contender runs in every round, the order rotating per round.
 * Each round has a saturation run (wrk, 50 connections: requests/s, server CPU per request)
 * and a paced run at a moderate fixed rate (p50/p99 latency, and what the proxy adds to p99).
 */
import { rmSync } from 'node:fs';
import { calibrateDelay, delayFor, type LoadOptions, loadTool, paced, saturate } from './lib/load.js';
import {
  BENCH_PATH,
  type HookdServer,
  type Server,
  startBareNodeProxy,
  startHookd,
  startNginx,
  startUpstream,
  tempDir,
} from './lib/peers.js';
import { cpuSeconds, LOAD_CORE, SERVER_CORE, sleep, which } from './lib/process.js';
import { seedHooks } from './lib/seed-hooks.js';
import { difference, fmt, fmtSpread, ratio, type Spread, spread, table } from './lib/stats.js';

export interface ProxyBenchOptions {
  rounds: number;
  /** Seconds per saturation run. */
  durationS: number;
  /** Connections of the saturation runs. */
  connections: number;
  /** Requests/s of the paced latency runs. */
  rate: number;
  /** Connections of the paced runs. */
  rateConnections: number;
  /** Seconds per paced run; 0 leaves the paced runs out. */
  rateDurationS: number;
  /** Non-matching hooks for the second hookd. */
  hooks: number;
  /** Seconds of unmeasured load per contender before the first round (JIT warm-up). */
  warmupS: number;
  pin: boolean;
  tool?: 'wrk' | 'autocannon';
  /**
   * Another build's bin/hookd.js, run as one more contender with the same hooks: the "before"
   * of a before/after comparison, measured in the same rounds.
   */
  baselineBin?: string;
  /** Write a V8 CPU profile of the hookd with hooks into this directory (when it exits). */
  cpuProfDir?: string;
  log?: (line: string) => void;
}

export interface ContenderResult {
  name: string;
  label: string;
  rps: number[];
  p50Ms: number[];
  p99Ms: number[];
  cpuUsPerRequest: number[];
  ratedRps: number[];
  ratedP50Ms: number[];
  ratedP99Ms: number[];
  errors: number;
  non2xx: number;
}

export interface ContenderSummary {
  rps: Spread;
  p50Ms: Spread;
  p99Ms: Spread;
  cpuUsPerRequest: Spread;
  ratedRps: Spread;
  ratedP50Ms: Spread;
  ratedP99Ms: Spread;
}

export interface ProxyBenchResult {
  tool: 'wrk' | 'autocannon';
  options: Omit<ProxyBenchOptions, 'log'>;
  contenders: (ContenderResult & { summary: ContenderSummary })[];
  /** hookd with hooks over the baseline build with hooks: requests/s and CPU per request. */
  afterVsBefore?: { rps: Spread; cpu: Spread };
  /** hookd with hooks over nginx, requests/s. */
  hookdVsNginx?: Spread;
  /** The bare Node proxy over nginx, requests/s: the platform's own distance. */
  nodeVsNginx?: Spread;
  /** hookd with hooks over the bare Node proxy, requests/s: hookd's own cost on top of it. */
  hookdVsNode?: Spread;
  /** p99 that the bare Node proxy adds over the upstream directly, paced run (ms). */
  addedP99MsNode?: Spread;
  /** p99 that hookd with hooks adds over the upstream directly, paced run (ms). */
  addedP99Ms?: Spread;
  /** Same for hookd without hooks and for nginx. */
  addedP99MsNoHooks?: Spread;
  addedP99MsNginx?: Spread;
  skipped: string[];
}

interface Contender {
  name: string;
  label: string;
  server: Server;
  /** Only in the paced runs: the reference for what a proxy adds to latency. */
  pacedOnly?: boolean;
}

const UPSTREAM_BODY_CHECK = '"Id":"ts1"';

async function check(c: Contender): Promise<void> {
  const res = await fetch(c.server.url + BENCH_PATH);
  const text = await res.text();
  if (res.status !== 200 || !text.includes(UPSTREAM_BODY_CHECK)) {
    throw new Error(`${c.label} answered ${res.status} ${text.slice(0, 200)} for ${BENCH_PATH}`);
  }
}

/** Hooks loaded, from hookd's `listening` line: proves the seeded hooks are in its index. */
const loadedHooks = (h: HookdServer): number => {
  for (const l of h.running.lines) {
    try {
      const rec = JSON.parse(l) as { msg?: string; hooks?: number };
      if (rec.msg === 'listening') return rec.hooks ?? Number.NaN;
    } catch {
      // not a log record
    }
  }
  return Number.NaN;
};

/** Runs the proxy comparison; see the module comment. */
export async function runProxyBench(opts: ProxyBenchOptions): Promise<ProxyBenchResult> {
  const log = opts.log ?? (() => {});
  const tool = loadTool(opts.tool);
  const skipped: string[] = [];
  const serverCore = opts.pin ? SERVER_CORE : undefined;
  const loadCore = opts.pin ? LOAD_CORE : undefined;
  const load: LoadOptions = { connections: opts.connections, durationS: opts.durationS, pin: opts.pin, tool };
  const rated: LoadOptions = { ...load, connections: opts.rateConnections, durationS: opts.rateDurationS };

  const stops: (() => Promise<void>)[] = [];
  const dirs: string[] = [];
  try {
    const direct = await startUpstream(serverCore);
    stops.push(direct.stop);
    const upstream = await startUpstream(loadCore);
    stops.push(upstream.stop);

    const contenders: Contender[] = [
      { name: 'upstream', label: 'upstream directly', server: direct },
      // The very upstream process the proxies forward to, on the load core: "p99 added" compares a
      // proxy with it, so that moving the upstream off the server core is not counted as the proxy's.
      {
        name: 'upstream-behind',
        label: 'upstream directly, core 1 (paced only)',
        server: upstream,
        pacedOnly: true,
      },
    ];

    const emptyDir = tempDir('proxy0');
    const hooksDir = tempDir('proxyN');
    dirs.push(emptyDir, hooksDir);
    const seedMs = await seedHooks(hooksDir, opts.hooks);
    log(`proxy: seeded ${opts.hooks} hooks in ${seedMs.toFixed(0)} ms`);
    // Started together to save time; a failed start must not leave the other one running.
    const started = await Promise.allSettled([
      startHookd({ core: serverCore, dataDir: emptyDir, upstream: upstream.url }),
      startHookd({
        core: serverCore,
        dataDir: hooksDir,
        upstream: upstream.url,
        ...(opts.cpuProfDir && { cpuProfDir: opts.cpuProfDir }),
      }),
    ]);
    for (const s of started) if (s.status === 'fulfilled') stops.push(s.value.stop);
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    const [bare, withHooks] = started.map((s) => (s as PromiseFulfilledResult<HookdServer>).value) as [
      HookdServer,
      HookdServer,
    ];
    const loaded = loadedHooks(withHooks);
    if (loaded !== opts.hooks) throw new Error(`hookd loaded ${loaded} hooks, not ${opts.hooks}`);
    contenders.push(
      { name: 'hookd-0', label: 'hookd, 0 hooks', server: bare },
      { name: 'hookd-N', label: `hookd, ${opts.hooks.toLocaleString('en-US')} hooks`, server: withHooks },
    );

    if (opts.baselineBin) {
      const baseDir = tempDir('proxyB');
      dirs.push(baseDir);
      await seedHooks(baseDir, opts.hooks);
      const base = await startHookd({
        core: serverCore,
        dataDir: baseDir,
        upstream: upstream.url,
        bin: opts.baselineBin,
      });
      stops.push(base.stop);
      contenders.push({
        name: 'hookd-base',
        label: `hookd before (${opts.baselineBin}), ${opts.hooks.toLocaleString('en-US')} hooks`,
        server: base,
      });
    }

    const bareProxy = await startBareNodeProxy(serverCore, upstream.url);
    stops.push(bareProxy.stop);
    contenders.push({ name: 'node-proxy', label: 'bare Node proxy (http + undici)', server: bareProxy });

    if (which('nginx')) {
      const nginx = await startNginx(serverCore, upstream.port);
      stops.push(nginx.stop);
      contenders.push({ name: 'nginx', label: 'nginx proxy_pass, keepalive', server: nginx });
    } else {
      skipped.push('nginx: not installed (bench/setup.ts installs nginx-light when run as root)');
    }

    for (const c of contenders) await check(c);
    for (const c of opts.warmupS > 0 ? contenders.filter((c) => !c.pacedOnly) : []) {
      log(`proxy: warming up ${c.label}`);
      await saturate(c.server.url + BENCH_PATH, { ...load, durationS: opts.warmupS });
    }

    // One delay for every contender (the same offered pacing), set so that the upstream alone
    // gets the rate asked for; wrk's millisecond timer makes the plain formula fall short.
    let delayMs = delayFor(opts.rate, opts.rateConnections);
    if (opts.warmupS > 0) {
      const probe = await paced(direct.url + BENCH_PATH, opts.rate, { ...rated, durationS: 2 }, delayMs);
      delayMs = calibrateDelay(opts.rate, opts.rateConnections, delayMs, probe.rps);
      log(
        `proxy: paced runs use a ${Math.round(delayMs)} ms delay per connection (probe: ${probe.rps.toFixed(0)}/s)`,
      );
    }

    const results = new Map<string, ContenderResult>(
      contenders.map((c) => [
        c.name,
        {
          name: c.name,
          label: c.label,
          rps: [],
          p50Ms: [],
          p99Ms: [],
          cpuUsPerRequest: [],
          ratedRps: [],
          ratedP50Ms: [],
          ratedP99Ms: [],
          errors: 0,
          non2xx: 0,
        },
      ]),
    );

    for (let round = 0; round < opts.rounds; round++) {
      const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!);
      for (const c of order) {
        if (c.pacedOnly) continue;
        const r = results.get(c.name)!;
        const pid = c.server.running.pid;
        const cpu0 = cpuSeconds(pid);
        const sat = await saturate(c.server.url + BENCH_PATH, load);
        const cpu1 = cpuSeconds(pid);
        r.rps.push(sat.rps);
        r.p50Ms.push(sat.p50Ms);
        r.p99Ms.push(sat.p99Ms);
        r.cpuUsPerRequest.push(((cpu1 - cpu0) / sat.requests) * 1e6);
        r.errors += sat.errors;
        r.non2xx += sat.non2xx;
        log(`proxy: round ${round + 1} ${c.label}: ${sat.rps.toFixed(0)} req/s`);
        await sleep(200);
      }
      // rateDurationS 0 (the smoke run) leaves the paced runs out.
      for (const c of opts.rateDurationS > 0 ? order : []) {
        const r = results.get(c.name)!;
        const p = await paced(c.server.url + BENCH_PATH, opts.rate, rated, delayMs);
        r.ratedRps.push(p.rps);
        r.ratedP50Ms.push(p.p50Ms);
        r.ratedP99Ms.push(p.p99Ms);
        r.errors += p.errors;
        r.non2xx += p.non2xx;
        log(`proxy: round ${round + 1} ${c.label} at ${opts.rate}/s: p99 ${p.p99Ms.toFixed(2)} ms`);
      }
    }

    const list = [...results.values()].map((r) => ({
      ...r,
      summary: {
        rps: spread(r.rps),
        p50Ms: spread(r.p50Ms),
        p99Ms: spread(r.p99Ms),
        cpuUsPerRequest: spread(r.cpuUsPerRequest),
        ratedRps: spread(r.ratedRps),
        ratedP50Ms: spread(r.ratedP50Ms),
        ratedP99Ms: spread(r.ratedP99Ms),
      },
    }));
    const get = (n: string) => results.get(n);
    // Per round, what each proxy adds over the upstream it forwards to, reached directly.
    const up = get('upstream-behind')!;
    const hn = get('hookd-N')!;
    const h0 = get('hookd-0')!;
    const ng = get('nginx');
    const np = get('node-proxy')!;
    const base = get('hookd-base');
    const { log: _log, ...options } = opts;
    return {
      tool,
      options,
      contenders: list,
      ...(ng && { hookdVsNginx: ratio(hn.rps, ng.rps), nodeVsNginx: ratio(np.rps, ng.rps) }),
      hookdVsNode: ratio(hn.rps, np.rps),
      addedP99MsNode: difference(np.ratedP99Ms, up.ratedP99Ms),
      ...(base && {
        afterVsBefore: { rps: ratio(hn.rps, base.rps), cpu: ratio(hn.cpuUsPerRequest, base.cpuUsPerRequest) },
      }),
      addedP99Ms: difference(hn.ratedP99Ms, up.ratedP99Ms),
      addedP99MsNoHooks: difference(h0.ratedP99Ms, up.ratedP99Ms),
      ...(ng && { addedP99MsNginx: difference(ng.ratedP99Ms, up.ratedP99Ms) }),
      skipped,
    };
  } finally {
    await Promise.all(stops.map((stop) => stop().catch(() => undefined)));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

const ms = (n: number) => fmt(n, 2);
const int = (n: number) => fmt(n, 0);

/** The results as a Markdown table with notes. */
export function formatProxyBench(r: ProxyBenchResult): string {
  const o = r.options;
  const baseline = r.contenders.find((c) => c.name === 'upstream')!.summary.rps.median;
  const saturated = (c: (typeof r.contenders)[number]) => c.rps.length > 0;
  const rows = r.contenders.map((c) => [
    c.label,
    saturated(c) ? fmtSpread(c.summary.rps, int) : '—',
    saturated(c) ? `${fmt(c.summary.rps.median / baseline, 2)}×` : '—',
    saturated(c) ? fmtSpread(c.summary.cpuUsPerRequest, int) : '—',
    saturated(c) ? `${ms(c.summary.p50Ms.median)} / ${ms(c.summary.p99Ms.median)}` : '—',
    `${ms(c.summary.ratedP50Ms.median)} / ${ms(c.summary.ratedP99Ms.median)}`,
    fmtSpread(c.summary.ratedP99Ms, ms),
    String(c.errors + c.non2xx),
  ]);
  const header = [
    'target',
    `req/s, ${o.connections} conns (min–max)`,
    'vs upstream',
    'server CPU µs/req',
    'p50 / p99 ms at saturation',
    `p50 / p99 ms at ~${int(o.rate)}/s`,
    `p99 ms at ~${int(o.rate)}/s (min–max)`,
    'errors',
  ];
  const notes = [
    `${r.tool}, ${o.rounds} interleaved rounds of ${o.durationS} s saturated + ${o.rateDurationS} s paced ` +
      `(${o.rateConnections} connections) per target, after ${o.warmupS} s of warm-up each; ` +
      `request \`GET ${BENCH_PATH}\`; ${o.pin ? 'server on core 0, load generator and upstream on core 1' : 'not pinned'}.`,
  ];
  if (r.hookdVsNginx)
    notes.push(
      `hookd with ${o.hooks.toLocaleString('en-US')} hooks / nginx, requests/s: ${fmtSpread(r.hookdVsNginx, (n) => fmt(n, 2))}×.`,
    );
  if (r.nodeVsNginx && r.hookdVsNode)
    notes.push(
      `The bare Node proxy / nginx: ${fmtSpread(r.nodeVsNginx, (n) => fmt(n, 2))}×; hookd with hooks / the bare Node proxy: ` +
        `${fmtSpread(r.hookdVsNode, (n) => fmt(n, 2))}× (what hookd's own work costs on top of Node's).`,
    );
  if (r.afterVsBefore)
    notes.push(
      `This build / the baseline build (same hooks): requests/s ${fmtSpread(r.afterVsBefore.rps, (n) => fmt(n, 2))}×, ` +
        `server CPU per request ${fmtSpread(r.afterVsBefore.cpu, (n) => fmt(n, 2))}×.`,
    );
  if (r.addedP99Ms)
    notes.push(
      `p99 added over the same upstream reached directly from core 1 at ~${int(o.rate)}/s (per-round difference, ms): hookd with hooks ${fmtSpread(r.addedP99Ms, ms)}, ` +
        `hookd without hooks ${fmtSpread(r.addedP99MsNoHooks!, ms)}` +
        (r.addedP99MsNode ? `, bare Node proxy ${fmtSpread(r.addedP99MsNode, ms)}` : '') +
        (r.addedP99MsNginx ? `, nginx ${fmtSpread(r.addedP99MsNginx, ms)}` : '') +
        '.',
    );
  for (const s of r.skipped) notes.push(`Skipped: ${s}`);
  return `${table(header, rows)}\n\n${notes.map((n) => `- ${n}`).join('\n')}`;
}
