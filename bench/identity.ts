/**
 * Identity providers on the proxy path, side by side: hookd without a provider, with
 * `--identity-jwt-jwks-url` (every request carries a Bearer JWT) and with `--identity-header`
 * (every request carries X-Forwarded-User from a trusted peer). Each hookd holds the same
 * 10,000 non-matching hooks plus one AfterCompletion hook on `/hooked`, whose callbacks go to a
 * sink in this process. Two paths: the bench path that no hook matches (the identity is never
 * resolved: the lazy path) and `/hooked/…` (every request fires, so the identity is resolved
 * once per request: a JWT verification, or a header read).
 *
 * Run: `npm run build && node dist/bench/identity.js [--seconds 5] [--rounds 3] [--hooks 10000]`.
 * A short side-by-side run on a shared machine: indicative, not a measurement of record.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { type LoadOptions, runWrk, saturate } from './lib/load.js';
import { BENCH_PATH, type HookdServer, startHookd, startUpstream, tempDir } from './lib/peers.js';
import { cpuSeconds, LOAD_CORE, SERVER_CORE, sleep } from './lib/process.js';
import { seedHooks } from './lib/seed-hooks.js';
import { fmt, spread, table } from './lib/stats.js';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};

async function main(): Promise<void> {
  const seconds = arg('seconds', 5);
  const rounds = arg('rounds', 3);
  const hooks = arg('hooks', 10_000);
  const connections = 50;

  // The JWKS and the callback sink live in this process (on the load core with wrk).
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256' };
  const jwks = createServer((_q, s) =>
    s.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })),
  );
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`;
  let callbacks = 0;
  const sink = createServer((q, s) => {
    q.resume();
    q.on('end', () => {
      callbacks++;
      s.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/cb`;
  const jwt = await new SignJWT({ sub: 'alice', aud: 'bench', iss: 'https://id.bench/' })
    .setProtectedHeader({ alg: 'ES256', kid: 'bench' })
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(privateKey);

  const upstream = await startUpstream(LOAD_CORE);
  const contenders: { name: string; args: string[]; server?: HookdServer }[] = [
    { name: 'no provider', args: [] },
    {
      name: '--identity-jwt-jwks-url (ES256)',
      args: [
        '--identity-jwt-jwks-url',
        jwksUrl,
        '--identity-jwt-audience',
        'bench',
        '--identity-jwt-issuer',
        'https://id.bench/',
      ],
    },
    {
      name: '--identity-header',
      args: ['--identity-header', 'X-Forwarded-User', '--trusted-proxy', '127.0.0.1'],
    },
  ];
  try {
    for (const c of contenders) {
      const dir = tempDir('ident');
      await seedHooks(dir, hooks);
      c.server = await startHookd({
        core: SERVER_CORE,
        dataDir: dir,
        upstream: upstream.url,
        extraArgs: c.args,
      });
      const res = await fetch(`${c.server.url}/hooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${c.server.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          PathPattern: '/hooked',
          Methods: ['GET'],
          Type: 1,
          Callback: sinkUrl,
          CallbackContent: '{"user":"$REQUEST_USER"}',
          Persist: false,
        }),
      });
      if (res.status !== 201)
        throw new Error(`${c.name}: creating the hook answered ${res.status} ${await res.text()}`);
    }
    const script = `wrk.headers["Authorization"] = "Bearer ${jwt}"\nwrk.headers["X-Forwarded-User"] = "alice"\n`;
    const load: LoadOptions = { connections, durationS: seconds, pin: true };
    const paths = [
      { name: `${BENCH_PATH} (no hook matches)`, path: BENCH_PATH },
      { name: '/hooked/x (one hook fires)', path: '/hooked/x' },
    ];
    const rps = new Map<string, number[]>();
    const cpu = new Map<string, number[]>();
    for (const c of contenders) await saturate(c.server!.url + BENCH_PATH, { ...load, durationS: 2 });
    for (let round = 0; round < rounds; round++) {
      for (const p of paths) {
        for (let i = 0; i < contenders.length; i++) {
          const c = contenders[(i + round) % contenders.length]!;
          const key = `${p.name}\t${c.name}`;
          const pid = c.server!.running.pid;
          const c0 = cpuSeconds(pid);
          const { result } = await runWrk(c.server!.url + p.path, load, script);
          const c1 = cpuSeconds(pid);
          if (result.non2xx > 0 || result.errors > 0)
            console.error(`${key}: ${result.non2xx} non-2xx, ${result.errors} errors`);
          rps.set(key, [...(rps.get(key) ?? []), result.rps]);
          cpu.set(key, [...(cpu.get(key) ?? []), ((c1 - c0) / result.requests) * 1e6]);
          console.error(`round ${round + 1} ${key}: ${result.rps.toFixed(0)} req/s`);
          await sleep(300);
        }
      }
    }
    const rows: string[][] = [];
    for (const p of paths) {
      const base = spread(rps.get(`${p.name}\t${contenders[0]!.name}`)!).median;
      for (const c of contenders) {
        const key = `${p.name}\t${c.name}`;
        const r = spread(rps.get(key)!);
        const u = spread(cpu.get(key)!);
        rows.push([
          p.name,
          c.name,
          `${fmt(r.median, 0)} (${fmt(r.min, 0)}–${fmt(r.max, 0)})`,
          `${fmt(r.median / base, 2)}×`,
          `${fmt(u.median, 0)} (${fmt(u.min, 0)}–${fmt(u.max, 0)})`,
        ]);
      }
    }
    console.log(
      `${rounds} rounds of ${seconds} s per cell, wrk -c${connections}, ${hooks.toLocaleString('en-US')} non-matching hooks + 1 matching; callbacks delivered: ${callbacks}\n`,
    );
    console.log(
      table(
        ['path', 'hookd', 'requests/s, median (min–max)', 'vs no provider', 'hookd CPU µs/request'],
        rows,
      ),
    );
  } finally {
    for (const c of contenders) await c.server?.stop();
    await upstream.stop();
    jwks.close();
    sink.close();
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
