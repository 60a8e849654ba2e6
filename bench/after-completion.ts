/**
 * What the AfterCompletion guarantee costs: the end of a proxied response whose
 * AfterCompletion hook fired waits until the callback is recorded. Two hookd builds run side by
 * side in interleaved rounds, each with one AfterCompletion hook (Persist: true, SQLite) matching
 * every request and a local receiver answering 200: `--baseline` (a build before the change) and
 * this checkout. Per round and build: a saturation run (wrk, 50 connections: requests/s and hookd
 * CPU per request) and a paced run (about `--rate` requests/s: p50/p99 latency).
 *
 *   node dist/bench/after-completion.js --baseline /path/to/before/bin/hookd.js [--rounds 3] [--seconds 5] [--rate 500]
 *
 * Nothing is pinned: on a machine shared with other work the figures are a short interleaved
 * comparison, not a measurement of the machine's best.
 */
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { paced, saturate } from './lib/load.js';
import { BENCH_PATH, HOOKD_BIN, startHookd, startUpstream, tempDir } from './lib/peers.js';
import { cpuSeconds, sleep } from './lib/process.js';

interface Sample {
  rps: number;
  cpuUsPerReq: number;
  pacedCpuUsPerReq: number;
  p50Ms: number;
  p99Ms: number;
  callbacks: number;
}

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function one(
  bin: string,
  extraArgs: string[],
  upstreamUrl: string,
  receiverUrl: string,
  seconds: number,
  rate: number,
) {
  const dataDir = tempDir('after');
  const hookd = await startHookd({ core: undefined, dataDir, upstream: upstreamUrl, bin, extraArgs });
  try {
    const res = await fetch(`${hookd.url}/hooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hookd.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        Type: 1,
        PathPattern: BENCH_PATH,
        Methods: ['GET'],
        Callback: `${receiverUrl}/cb`,
        CallbackContent: '{"path":"$REQUEST_PATH","status":$STATUS_CODE}',
      }),
    });
    if (res.status !== 201) throw new Error(`creating the hook: ${res.status} ${await res.text()}`);
    const url = hookd.url + BENCH_PATH;
    // Warm-up, unmeasured.
    await saturate(url, { connections: 50, durationS: 2, pin: false });
    await sleep(500);
    const cpu0 = cpuSeconds(hookd.running.pid);
    const sat = await saturate(url, { connections: 50, durationS: seconds, pin: false });
    const cpu1 = cpuSeconds(hookd.running.pid);
    await sleep(500);
    const cpu2 = cpuSeconds(hookd.running.pid);
    const lat = await paced(url, rate, { connections: 20, durationS: seconds, pin: false });
    const cpu3 = cpuSeconds(hookd.running.pid);
    return {
      rps: sat.rps,
      cpuUsPerReq: ((cpu1 - cpu0) * 1e6) / sat.requests,
      p50Ms: lat.p50Ms,
      p99Ms: lat.p99Ms,
      pacedCpuUsPerReq: ((cpu3 - cpu2) * 1e6) / lat.requests,
    };
  } finally {
    await hookd.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const baseline = arg('baseline', '');
  if (!baseline) throw new Error('--baseline /path/to/before/bin/hookd.js is required');
  const rounds = Number(arg('rounds', '3'));
  const seconds = Number(arg('seconds', '5'));
  const rate = Number(arg('rate', '500'));
  let callbacks = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      callbacks++;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const upstream = await startUpstream(undefined);
  // The same delivery limits for both (the baseline's 16 per origin), so that the difference is
  // the AfterCompletion wait, not how fast callbacks drain to the one receiver endpoint.
  const sameLimits = process.argv.includes('--default-limits')
    ? []
    : ['--delivery-per-host', '16', '--delivery-per-endpoint', '16'];
  const contenders = [
    { name: 'before', bin: baseline, args: [] as string[] },
    { name: 'after', bin: HOOKD_BIN, args: sameLimits },
  ];
  const samples: Record<string, Sample[]> = { before: [], after: [] };
  try {
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? contenders : [...contenders].reverse();
      for (const c of order) {
        const before = callbacks;
        const s = await one(c.bin, c.args, upstream.url, receiverUrl, seconds, rate);
        samples[c.name]!.push({ ...s, callbacks: callbacks - before });
        console.log(`round ${r + 1} ${c.name}: ${JSON.stringify(s)}`);
      }
    }
  } finally {
    await upstream.stop();
    receiver.close();
  }
  const summary = Object.fromEntries(
    Object.entries(samples).map(([k, v]) => [
      k,
      {
        rps: median(v.map((s) => s.rps)),
        cpuUsPerReq: median(v.map((s) => s.cpuUsPerReq)),
        pacedCpuUsPerReq: median(v.map((s) => s.pacedCpuUsPerReq)),
        p50Ms: median(v.map((s) => s.p50Ms)),
        p99Ms: median(v.map((s) => s.p99Ms)),
      },
    ]),
  );
  console.log(JSON.stringify({ rounds, seconds, rate, samples, summary }, null, 1));
}

await main();
