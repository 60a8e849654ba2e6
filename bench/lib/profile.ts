/**
 * Profiles hookd's proxy path: hookd with N non-matching hooks under wrk load, run with
 * `node --cpu-prof`; then summarises the profile (self and inclusive time per function, time
 * per module group) and writes folded stacks for a flame graph
 * (`flamegraph.pl profile.folded > flame.svg`, or load the .cpuprofile into speedscope or
 * Chrome DevTools).
 *
 * Run: `node dist/bench/lib/profile.js [--hooks 10000] [--seconds 10] [--out DIR] [--no-pin]`.
 */
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { saturate } from './load.js';
import { BENCH_PATH, REPO_ROOT, startHookd, startUpstream, tempDir } from './peers.js';
import { cpuSeconds, LOAD_CORE, pinSelf, SERVER_CORE } from './process.js';
import { seedHooks } from './seed-hooks.js';
import { table } from './stats.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  totalMs: number;
  /** Share of samples spent in each group of modules (self time). */
  groups: { group: string; ms: number; share: number }[];
  /** Functions by self time. */
  self: { fn: string; ms: number; share: number }[];
  /** Functions by inclusive time (time with them on the stack). */
  inclusive: { fn: string; ms: number; share: number }[];
  folded: string;
}

const shortUrl = (url: string): string => {
  if (!url) return '';
  const u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('/node_modules/');
  if (nm !== -1) return u.slice(nm + 14);
  return u.startsWith(REPO_ROOT) ? u.slice(REPO_ROOT.length + 1) : u;
};

const groupOf = (url: string, fn: string): string => {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const u = shortUrl(url);
  if (u.startsWith('node:')) return u.split('/')[0]!.replace(/^node:internal.*/, 'node:internal');
  if (u.startsWith('dist/src/')) return u.slice(5).split('/').slice(0, 2).join('/');
  return u.split('/')[0]!;
};

/** Self and inclusive time per function of a V8 .cpuprofile. */
export function summarise(profile: CpuProfile, top = 25): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const label = (n: ProfileNode) =>
    `${n.callFrame.functionName || '(anonymous)'} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`.trim();
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  const groups = new Map<string, number>();
  const folded = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    self.set(label(n), (self.get(label(n)) ?? 0) + us);
    const g = groupOf(n.callFrame.url, n.callFrame.functionName);
    groups.set(g, (groups.get(g) ?? 0) + us);
    const stack: string[] = [];
    const seen = new Set<string>();
    for (let p: number | undefined = id; p !== undefined; p = parent.get(p)) {
      const l = label(byId.get(p)!);
      stack.push(l.replace(/;/g, ','));
      if (!seen.has(l)) {
        seen.add(l);
        incl.set(l, (incl.get(l) ?? 0) + us);
      }
    }
    const key = stack.reverse().join(';');
    folded.set(key, (folded.get(key) ?? 0) + us);
  }
  const rank = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => ({ fn: k, ms: us / 1000, share: us / total }));
  return {
    totalMs: total / 1000,
    groups: [...groups.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([group, us]) => ({ group, ms: us / 1000, share: us / total })),
    self: rank(self),
    inclusive: rank(incl),
    folded: [...folded.entries()].map(([k, us]) => `${k} ${Math.round(us)}`).join('\n'),
  };
}

/** The summary as Markdown tables. */
export function formatSummary(s: ProfileSummary): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  return [
    `Sampled ${(s.totalMs / 1000).toFixed(1)} s of CPU.`,
    '',
    table(
      ['module group', 'self', 'share'],
      s.groups.slice(0, 15).map((g) => [g.group, `${g.ms.toFixed(0)} ms`, pct(g.share)]),
    ),
    '',
    table(
      ['function (self time)', 'self', 'share'],
      s.self.map((f) => [f.fn, `${f.ms.toFixed(0)} ms`, pct(f.share)]),
    ),
    '',
    table(
      ['function (inclusive)', 'total', 'share'],
      s.inclusive.map((f) => [f.fn, `${f.ms.toFixed(0)} ms`, pct(f.share)]),
    ),
  ].join('\n');
}

/** Each `.cpuprofile` in `dir` summarised, oldest first, under its file's path. */
export function summariesIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs)
    .map((f) => `${f}\n${formatSummary(summarise(JSON.parse(readFileSync(f, 'utf8')) as CpuProfile))}`);
}

/** Runs hookd with hooks under load with --cpu-prof and summarises the profile into `outDir`. */
export async function profileProxy(opts: {
  hooks: number;
  seconds: number;
  outDir: string;
  pin: boolean;
}): Promise<{ summary: ProfileSummary; requests: number; cpuUsPerRequest: number }> {
  const dataDir = tempDir('profile');
  const profDir = join(opts.outDir, 'raw');
  rmSync(profDir, { recursive: true, force: true });
  const upstream = await startUpstream(opts.pin ? LOAD_CORE : undefined);
  try {
    await seedHooks(dataDir, opts.hooks);
    const hookd = await startHookd({
      core: opts.pin ? SERVER_CORE : undefined,
      dataDir,
      upstream: upstream.url,
      cpuProfDir: profDir,
    });
    const load = { connections: 50, durationS: 3, pin: opts.pin };
    await saturate(hookd.url + BENCH_PATH, load);
    const cpu0 = cpuSeconds(hookd.running.pid);
    const r = await saturate(hookd.url + BENCH_PATH, { ...load, durationS: opts.seconds });
    const cpu1 = cpuSeconds(hookd.running.pid);
    await hookd.stop();
    const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no .cpuprofile in ${profDir}: did hookd exit cleanly?`);
    const summary = summarise(JSON.parse(readFileSync(join(profDir, file), 'utf8')) as CpuProfile);
    writeFileSync(join(opts.outDir, 'profile.folded'), `${summary.folded}\n`);
    writeFileSync(join(opts.outDir, 'summary.md'), `${formatSummary(summary)}\n`);
    return { summary, requests: r.requests, cpuUsPerRequest: ((cpu1 - cpu0) / r.requests) * 1e6 };
  } finally {
    await upstream.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const arg = (name: string, dflt: string) => {
    const i = argv.indexOf(name);
    return i === -1 ? dflt : argv[i + 1]!;
  };
  const pin = !argv.includes('--no-pin');
  if (pin) pinSelf(LOAD_CORE);
  const out = arg('--out', '');
  const outDir = out ? resolve(out) : tempDir('profile-out');
  const r = await profileProxy({
    hooks: Number(arg('--hooks', '10000')),
    seconds: Number(arg('--seconds', '10')),
    outDir,
    pin,
  });
  console.log(formatSummary(r.summary));
  console.log(
    `\n${r.requests} requests, hookd CPU ${r.cpuUsPerRequest.toFixed(0)} µs/request (the profiler adds some); ` +
      `profile and folded stacks in ${outDir}`,
  );
}
