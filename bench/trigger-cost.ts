/**
 * What a trigger costs hookd beside the callback it fires: CPU per callback at a fixed rate
 * (1,000/s by default), read from /proc, in interleaved rounds of four contenders:
 *
 * - raw: a child process posting each callback with undici `Pool.request` at the rate (its whole
 *   CPU, pacing included): what a callback costs with no daemon at all;
 * - report: hookd on SQLite taking `POST /_hookd/report` of one request every 1/rate s, each
 *   firing one durable callback (hookd's CPU; the client's is not counted);
 * - proxied: hookd proxying requests that match no hook, at the rate;
 * - proxied + callback: hookd proxying requests that each fire one durable callback.
 *
 * The targets: report ≤ 1.5× raw, and proxied + callback ≤ proxied + 1.5× raw.
 *
 *   node dist/bench/trigger-cost.js [--rate 1000] [--seconds 5] [--rounds 5] [--baseline BIN]
 *     [--profile DIR]   (the report contender under `node --cpu-prof`, summarised per round)
 */
import { fork } from 'node:child_process';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { startUpstream, tempDir } from './lib/peers.js';
import { cpuSeconds, LOAD_CORE, pinSelf, SERVER_CORE, sleep, start } from './lib/process.js';
import { startQuietHookd } from './lib/quiet-hookd.js';
import { fmt, type Spread, spread, table } from './lib/stats.js';

export interface TriggerCostOptions {
  rate: number;
  seconds: number;
  rounds: number;
  /** Another build's bin/hookd.js, measured in the same rounds. */
  baselineBin?: string;
  /** Run this build's report contender under `node --cpu-prof`, its profiles into this directory. */
  profileDir?: string;
  log?: (line: string) => void;
}

export interface TriggerCostContender {
  name: string;
  /** CPU µs per callback (or per request, for the plain proxy), one figure per round. */
  cpuUs: number[];
  summary: Spread;
}

export interface TriggerCostResult {
  options: Omit<TriggerCostOptions, 'log'>;
  contenders: TriggerCostContender[];
  /** report CPU / raw CPU, median of the per-round ratios. */
  reportVsRaw?: Spread;
  /** (proxied + callback − proxied) / raw, median of the per-round ratios. */
  proxiedCallbackVsRaw?: Spread;
}

const HOOK_PATH = '/repositories/r1/timeseries/ts1';
const PLAIN_PATH = '/status';
const BODY = '{"value": 21.5}';

// The receiver counts what arrives; GET /count answers the count (no build step, only `http`).
const RECEIVER_SOURCE = `
const http = require('node:http');
let count = 0;
http.createServer({ keepAliveTimeout: 65000 }, (req, res) => {
  if (req.method === 'GET' && req.url === '/count') { res.end(String(count)); return; }
  req.resume();
  req.on('end', () => { count++; res.writeHead(200, { 'content-length': 0 }); res.end(); });
}).listen(0, '127.0.0.1', function () { console.log('port ' + this.address().port); });
process.on('SIGTERM', () => process.exit(0));
`;

/** Calls `send` `rate` times a second for `seconds`; resolves when every call has settled. */
export async function paced(rate: number, seconds: number, send: () => Promise<void>): Promise<number> {
  const total = Math.round(rate * seconds);
  let sent = 0;
  let failed = 0;
  const pending = new Set<Promise<void>>();
  const t0 = performance.now();
  await new Promise<void>((done) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate));
      while (sent < due) {
        sent++;
        const p: Promise<void> = send()
          .catch(() => {
            failed++;
          })
          .finally(() => pending.delete(p));
        pending.add(p);
      }
      if (sent >= total) done();
      else setTimeout(tick, 1);
    };
    tick();
  });
  await Promise.all(pending);
  if (failed > 0) throw new Error(`${failed} of ${total} requests failed`);
  return total;
}

/** The raw contender's child: posts at the rate and answers its own CPU per callback. */
async function rawChild(receiver: string, rate: number, seconds: number): Promise<void> {
  // On hookd's core, so that both are measured on the same core beside the same neighbours.
  pinSelf(SERVER_CORE);
  const pool = new Pool(receiver, { connections: 16 });
  const headers = { 'content-type': 'application/json' };
  const post = async () => {
    const r = await pool.request({ path: '/hook', method: 'POST', headers, body: BODY });
    await r.body.dump();
  };
  await paced(rate, 1, post);
  const before = process.cpuUsage();
  const n = await paced(rate, seconds, post);
  const used = process.cpuUsage(before);
  await pool.close();
  process.send?.({ cpuUs: (used.user + used.system) / n });
}

async function receiverCount(url: string): Promise<number> {
  return Number(await (await fetch(`${url}/count`)).text());
}

async function untilCount(url: string, target: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await receiverCount(url)) < target) {
    if (Date.now() > deadline)
      throw new Error(`only ${await receiverCount(url)} of ${target} callbacks arrived`);
    await sleep(5);
  }
}

async function rawRound(receiver: string, opts: TriggerCostOptions): Promise<number> {
  const child = fork(fileURLToPath(import.meta.url), [
    '--child-raw',
    receiver,
    String(opts.rate),
    String(opts.seconds),
  ]);
  return new Promise((res, rej) => {
    child.once('message', (m: { cpuUs: number }) => res(m.cpuUs));
    child.once('exit', (code) => rej(new Error(`raw sender exited with ${code}`)));
  });
}

type Kind = 'report' | 'proxied' | 'proxied + callback';

/** One hookd contender's round: CPU µs per trigger over `seconds` at the rate, after a warm-up. */
async function hookdRound(
  kind: Kind,
  receiver: string,
  upstream: string,
  opts: TriggerCostOptions,
  bin?: string,
) {
  const dataDir = tempDir('trigger');
  const hookd = await startQuietHookd({
    dataDir,
    core: SERVER_CORE,
    ...(kind !== 'report' && { upstream }),
    ...(bin && { bin }),
    ...(kind === 'report' && !bin && opts.profileDir && { profileDir: opts.profileDir }),
  });
  const auth = { authorization: `Bearer ${hookd.token}`, 'content-type': 'application/json' };
  const api = new Pool(hookd.url, { connections: 16 });
  try {
    const created = await fetch(`${hookd.url}/hooks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        PathPattern: '/repositories/(*)/timeseries/(*)',
        Methods: ['POST'],
        Type: 1,
        Callback: `${receiver}/hook`,
        CallbackContent: '{"series": "$2"}',
      }),
    });
    if (created.status !== 201)
      throw new Error(`hook not created: ${created.status} ${await created.text()}`);
    const report = JSON.stringify({ Method: 'POST', Path: HOOK_PATH, StatusCode: 201 });
    const send =
      kind === 'report'
        ? async () => {
            const r = await api.request({
              path: '/_hookd/report',
              method: 'POST',
              headers: auth,
              body: report,
            });
            await r.body.dump();
            if (r.statusCode !== 202) throw new Error(`report answered ${r.statusCode}`);
          }
        : async () => {
            const path = kind === 'proxied' ? PLAIN_PATH : HOOK_PATH;
            const r = await api.request({
              path,
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: BODY,
            });
            await r.body.dump();
          };
    const fires = kind !== 'proxied';
    const base = await receiverCount(receiver);
    await paced(opts.rate, 1, send);
    if (fires) await untilCount(receiver, base + opts.rate);
    const before = cpuSeconds(hookd.running.pid);
    const n = await paced(opts.rate, opts.seconds, send);
    if (fires) await untilCount(receiver, base + opts.rate + n);
    return ((cpuSeconds(hookd.running.pid) - before) * 1e6) / n;
  } finally {
    await api.close();
    await hookd.running.stop(15_000);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function runTriggerCostBench(opts: TriggerCostOptions): Promise<TriggerCostResult> {
  const log = opts.log ?? (() => undefined);
  const rx = await start(process.execPath, ['-e', RECEIVER_SOURCE], {
    core: LOAD_CORE,
    ready: (l) => l.startsWith('port '),
  });
  const receiver = `http://127.0.0.1:${rx.lines.find((l) => l.startsWith('port '))!.slice(5)}`;
  const upstream = await startUpstream(LOAD_CORE);
  pinSelf(LOAD_CORE);
  const builds: { tag: string; bin?: string }[] = [
    { tag: '' },
    ...(opts.baselineBin ? [{ tag: ' [baseline]', bin: opts.baselineBin }] : []),
  ];
  const names = [
    'raw undici',
    ...builds.flatMap((b) =>
      (['report', 'proxied', 'proxied + callback'] as const).map((k) => `${k}${b.tag}`),
    ),
  ];
  const rounds = new Map<string, number[]>(names.map((n) => [n, []]));
  try {
    for (let r = 0; r < opts.rounds; r++) {
      rounds.get('raw undici')!.push(await rawRound(receiver, opts));
      for (const b of builds)
        for (const k of ['report', 'proxied', 'proxied + callback'] as const)
          rounds.get(`${k}${b.tag}`)!.push(await hookdRound(k, receiver, upstream.url, opts, b.bin));
      log(
        `  round ${r + 1}/${opts.rounds}: ${names.map((n) => `${n} ${fmt(rounds.get(n)!.at(-1)!, 0)} µs`).join(', ')}`,
      );
    }
  } finally {
    await upstream.stop();
    await rx.stop();
  }
  const per = (n: string) => rounds.get(n)!;
  const ratio = (f: (i: number) => number) => spread(per('raw undici').map((_, i) => f(i)));
  return {
    options: {
      rate: opts.rate,
      seconds: opts.seconds,
      rounds: opts.rounds,
      ...(opts.baselineBin && { baselineBin: opts.baselineBin }),
    },
    contenders: names.map((name) => ({ name, cpuUs: per(name), summary: spread(per(name)) })),
    reportVsRaw: ratio((i) => per('report')[i]! / per('raw undici')[i]!),
    proxiedCallbackVsRaw: ratio(
      (i) => (per('proxied + callback')[i]! - per('proxied')[i]!) / per('raw undici')[i]!,
    ),
  };
}

export function formatTriggerCost(r: TriggerCostResult): string {
  const rows = r.contenders.map((c) => [
    c.name,
    `${fmt(c.summary.median, 0)} µs`,
    `${fmt(c.summary.min, 0)}–${fmt(c.summary.max, 0)} µs`,
  ]);
  const lines = [
    table(['contender', 'CPU per trigger (median)', 'rounds'], rows),
    '',
    `At ${r.options.rate}/s for ${r.options.seconds} s, ${r.options.rounds} interleaved rounds; CPU from /proc.`,
  ];
  if (r.reportVsRaw)
    lines.push(
      `report / raw: ${fmt(r.reportVsRaw.median, 2)}× (rounds ${fmt(r.reportVsRaw.min, 2)}–${fmt(r.reportVsRaw.max, 2)})`,
    );
  if (r.proxiedCallbackVsRaw)
    lines.push(
      `(proxied + callback − proxied) / raw: ${fmt(r.proxiedCallbackVsRaw.median, 2)}× (rounds ${fmt(r.proxiedCallbackVsRaw.min, 2)}–${fmt(r.proxiedCallbackVsRaw.max, 2)})`,
    );
  return lines.join('\n');
}

function parseArgs(argv: string[]): TriggerCostOptions {
  const o: TriggerCostOptions = { rate: 1000, seconds: 5, rounds: 5 };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    if (argv[i] === '--rate') o.rate = Number(v);
    else if (argv[i] === '--seconds') o.seconds = Number(v);
    else if (argv[i] === '--rounds') o.rounds = Number(v);
    else if (argv[i] === '--baseline') o.baselineBin = resolve(v ?? '');
    else if (argv[i] === '--profile') o.profileDir = resolve(v ?? '');
    else continue;
    i++;
  }
  return o;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const a = process.argv.slice(2);
  if (a[0] === '--child-raw') await rawChild(a[1]!, Number(a[2]), Number(a[3]));
  else {
    const o = parseArgs(a);
    const r = await runTriggerCostBench({ ...o, log: (l) => console.log(l) });
    console.log(formatTriggerCost(r));
    if (o.profileDir) {
      // The profile counts the warm-up and start-up too: read the report path's functions in it.
      const { summariesIn } = await import('./lib/profile.js');
      for (const summary of summariesIn(o.profileDir)) console.log(`\n${summary}`);
    }
  }
}
