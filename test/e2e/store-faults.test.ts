import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { metricSample } from '../helpers/metrics.js';
import { requireOrSkip } from '../helpers/require.js';
import {
  createHook,
  type Receiver,
  sleep,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// Store faults: a write the store refuses answers 503 STORE_UNAVAILABLE with
// Retry-After, /readyz is 503 while it lasts, callbacks fired meanwhile are sent and kept in a
// bounded buffer (Durable: false in the delivery log, hookd_delivery_buffered in /metrics), and
// written through when the store takes writes again: none lost up to the buffer size.
// Two real faults: a full tmpfs under SQLite, and a throwaway PostgreSQL cluster stopped and
// started again (never the machine's shared server).

const BUFFER = 60;

async function metric(d: TestDaemon, name: string): Promise<number> {
  const text = (await api<string>(d.opsUrl, undefined, 'GET', '/metrics')).text;
  return metricSample(text, name) ?? metricSample(text, `${name}{}`) ?? Number.NaN;
}

interface Scene {
  receiver: Receiver;
  upstream: Upstream;
  hooks: { before: string; after: string };
}

async function scene(d: TestDaemon, receiver: Receiver): Promise<Scene['hooks']> {
  const before = await createHook(d, {
    Type: 0,
    PathPattern: '/sf/(*)',
    Methods: ['GET'],
    Callback: `${receiver.url}/before`,
    CallbackContent: '$1',
  });
  const after = await createHook(d, {
    Type: 1,
    PathPattern: '/sf/(*)',
    Methods: ['GET'],
    Callback: `${receiver.url}/after`,
    CallbackContent: '$1',
  });
  return { before: before.Id, after: after.Id };
}

/** Proxied GET /sf/<n> for each n; resolves when every response is complete. */
async function proxied(d: TestDaemon, from: number, count: number): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, async (_v, i) => {
      const res = await fetch(`${d.url}/sf/${from + i}`);
      await res.arrayBuffer();
      assert.equal(res.status, 200);
    }),
  );
}

function received(r: Receiver, path: string): Set<string> {
  return new Set(r.calls.filter((c) => c.url === path).map((c) => c.body));
}

/** What both store-fault tests check while the store refuses writes and after it is back. */
async function duringAndAfter(
  d: TestDaemon,
  receiver: Receiver,
  hooks: Scene['hooks'],
  fault: () => Promise<void>,
  recover: () => Promise<void>,
  opts: { logReadable: boolean },
): Promise<string[]> {
  await fault();
  // Drive proxied requests until the outbox has a refused write (SQLite on a full disk may still
  // fit a few rows into pages it already has).
  let n = 1000;
  await until(
    'a refused delivery write',
    async () => {
      await proxied(d, n, 5);
      n += 5;
      return (await metric(d, 'hookd_delivery_buffered')) > 0;
    },
    30_000,
  );
  const faultFrom = n - 5;
  // Callbacks are sent while the store refuses writes.
  await until(
    'a callback sent during the fault',
    () => received(receiver, '/after').has(String(n - 1)),
    30_000,
  );

  // A hook write may still fit into pages the file has (SQLite reuses the WAL once it started
  // over): each one is stored then, and a later one, with the space they took, is refused.
  const create = () =>
    api<{ code: string }>(d.url, d.token, 'POST', '/hooks', {
      PathPattern: '/other',
      Methods: ['GET'],
      Callback: `${receiver.url}/x`,
      CallbackContent: 'x'.repeat(60_000),
    });
  let created = await create();
  for (let stored = 0; created.status === 201 && stored < 200; stored++) created = await create();
  assert.equal(created.status, 503, created.text);
  assert.equal(created.body.code, 'STORE_UNAVAILABLE');
  assert.equal(created.headers.get('retry-after'), '5');
  assert.match(created.headers.get('content-type') ?? '', /problem\+json/);
  const ready = await api<{ store: boolean }>(d.opsUrl, undefined, 'GET', '/readyz');
  assert.equal(ready.status, 503);
  assert.equal(ready.body.store, false);
  assert.equal(await metric(d, 'hookd_store_available'), 0);
  const report = await api<{ code: string }>(d.url, d.token, 'POST', '/_hookd/report', {
    Method: 'GET',
    Path: '/sf/report',
  });
  if (report.status !== 503 || report.body.code !== 'STORE_UNAVAILABLE')
    assert.fail(`POST /report during the fault: ${report.status} ${report.text}`);

  if (opts.logReadable) {
    // The delivery log shows the buffered ones, marked as not yet durable.
    const log = await api<{ Durable?: boolean }[]>(d.url, d.token, 'GET', `/hooks/${hooks.after}/deliveries`);
    assert.equal(log.status, 200, log.text);
    assert.ok(
      log.body.some((x) => x.Durable === false),
      'buffered deliveries are listed with Durable: false',
    );
  }

  // Up to the buffer size in total: more would be dropped (and counted).
  const buffered = await metric(d, 'hookd_delivery_buffered');
  const room = Math.floor((BUFFER - buffered) / 2) - 2;
  if (room > 0) await proxied(d, n, room);
  n += Math.max(room, 0);
  const firedDuringFault = Array.from({ length: n - faultFrom }, (_v, i) => String(faultFrom + i));
  assert.equal(
    await metric(d, 'hookd_delivery_buffer_dropped_total'),
    0,
    'nothing dropped below the buffer size',
  );
  // Beyond it: dropped and counted, the proxied requests themselves unharmed.
  await proxied(d, 5000, BUFFER);
  await until(
    'drops to be counted',
    async () => (await metric(d, 'hookd_delivery_buffer_dropped_total')) > 0,
    30_000,
  );

  await recover();
  await until(
    'the buffer to be written through',
    async () => (await metric(d, 'hookd_delivery_buffered')) === 0,
    30_000,
  );
  await until(
    'readiness',
    async () => (await api(d.opsUrl, undefined, 'GET', '/readyz')).status === 200,
    30_000,
  );
  assert.equal(await metric(d, 'hookd_store_available'), 1);
  const again = await api(d.url, d.token, 'POST', '/hooks', {
    PathPattern: '/other',
    Methods: ['GET'],
    Callback: `${receiver.url}/x`,
  });
  assert.equal(again.status, 201, again.text);

  // Every callback fired during the fault (up to the buffer size) reached the receiver.
  for (const path of ['/before', '/after']) {
    const got = received(receiver, path);
    const missing = firedDuringFault.filter((x) => !got.has(x));
    assert.deepEqual(missing, [], `${path}: callbacks fired during the fault and lost`);
  }
  return firedDuringFault;
}

describe('store faults: SQLite on a full tmpfs', () => {
  it('answers 503 STORE_UNAVAILABLE, turns unready, buffers and writes through', {
    timeout: 120_000,
  }, async (t) => {
    if (process.getuid?.() !== 0) {
      return requireOrSkip(t, 'mounting a tmpfs needs root; run the tests as root for the disk-full test');
    }
    const dir = mkdtempSync(join(tmpdir(), 'hookd-tmpfs-'));
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=6m,mode=0700', 'tmpfs', dir]);
    if (mounted.status !== 0) {
      rmSync(dir, { recursive: true, force: true });
      return requireOrSkip(
        t,
        `mount -t tmpfs failed (${mounted.stderr.toString().trim()}); no disk-full test here`,
      );
    }
    const receiver = await startReceiver();
    const upstream = await startUpstream((_req, res) => res.writeHead(200).end('ok'));
    const dataDir = join(dir, 'data');
    let d: TestDaemon | undefined;
    const filler = join(dir, 'filler');
    try {
      d = await startHookd({ upstream: upstream.url, storeFaultBuffer: BUFFER }, { dataDir });
      const hooks = await scene(d, receiver);
      await proxied(d, 0, 10);
      await until('the first callbacks', () => received(receiver, '/after').size === 10, 30_000);
      const fired = await duringAndAfter(
        d,
        receiver,
        hooks,
        async () => {
          // Fill the file system to the last byte.
          const fd = openSync(filler, 'w');
          const chunk = Buffer.alloc(64 * 1024, 1);
          try {
            for (;;) writeSync(fd, chunk);
          } catch {
            for (;;) {
              try {
                writeSync(fd, chunk, 0, 512);
              } catch {
                break;
              }
            }
          } finally {
            closeSync(fd);
          }
        },
        async () => rmSync(filler),
        { logReadable: true },
      );
      // After a restart the buffered deliveries are in the delivery log: they were made durable.
      await d.close();
      const restarted = await startHookd({ upstream: upstream.url }, { dataDir });
      d = restarted;
      for (const hookId of [hooks.before, hooks.after]) {
        const log: { body: { Request: { Body: string } }[] } = await api(
          restarted.url,
          restarted.token,
          'GET',
          `/hooks/${hookId}/deliveries?limit=1000`,
        );
        const bodies = new Set<string>(log.body.map((x) => x.Request.Body));
        assert.deepEqual(
          fired.filter((x) => !bodies.has(x)),
          [],
          'every buffered delivery was written through',
        );
      }
    } finally {
      await d?.close().catch(() => undefined);
      await upstream.close();
      await receiver.close();
      spawnSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A free TCP port on 127.0.0.1. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

function pgBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'pg_ctl'))) return join(root, v, 'bin');
  return undefined;
}

describe('store faults: PostgreSQL stopped and started again', () => {
  it('answers 503 STORE_UNAVAILABLE, turns unready, buffers and writes through', {
    timeout: 180_000,
  }, async (t) => {
    const bin = pgBin();
    if (!bin) {
      return requireOrSkip(
        t,
        'no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql)',
        'postgres',
      );
    }
    const asRoot = process.getuid?.() === 0;
    // initdb refuses to run as root: the cluster is made and run as the postgres user then.
    const run = (args: string[]) =>
      asRoot
        ? execFileSync('runuser', ['-u', 'postgres', '--', ...args], { stdio: 'pipe' })
        : execFileSync(args[0]!, args.slice(1), { stdio: 'pipe' });
    const dir = mkdtempSync(join(tmpdir(), 'hookd-pgfault-'));
    if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), 0);
    const data = join(dir, 'data');
    const port = await freePort();
    const ctl = (action: 'start' | 'stop') =>
      run(
        action === 'start'
          ? [
              join(bin, 'pg_ctl'),
              '-D',
              data,
              '-l',
              join(dir, 'log'),
              '-w',
              '-o',
              `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
              'start',
            ]
          : [join(bin, 'pg_ctl'), '-D', data, '-m', 'fast', '-w', 'stop'],
      );
    try {
      run([join(bin, 'initdb'), '-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      return requireOrSkip(t, `initdb failed (${(err as Error).message.split('\n')[0]})`, 'postgres');
    }
    ctl('start');
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const receiver = await startReceiver();
    const upstream = await startUpstream((_req, res) => res.writeHead(200).end('ok'));
    let d: TestDaemon | undefined;
    let running = true;
    try {
      d = await startHookd({
        upstream: upstream.url,
        databaseUrl: url,
        storeFaultBuffer: BUFFER,
        clusterLeaseMs: 60_000,
      });
      const hooks = await scene(d, receiver);
      await proxied(d, 0, 10);
      await until('the first callbacks', () => received(receiver, '/after').size === 10, 30_000);
      const fired = await duringAndAfter(
        d,
        receiver,
        hooks,
        async () => {
          ctl('stop');
          running = false;
        },
        async () => {
          await sleep(500);
          ctl('start');
          running = true;
        },
        // The API authenticates against the database: while it is down, every call is 503.
        { logReadable: false },
      );
      // The buffered deliveries are rows of the database now.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ body: string; hook_id: string }>(
          "SELECT convert_from(body, 'UTF8') AS body, hook_id FROM deliveries WHERE hook_id = ANY($1)",
          [[hooks.before, hooks.after]],
        );
        for (const hookId of [hooks.before, hooks.after]) {
          const bodies = new Set(rows.filter((r) => r.hook_id === hookId).map((r) => r.body));
          assert.deepEqual(
            fired.filter((x) => !bodies.has(x)),
            [],
            'every buffered delivery was written through',
          );
        }
      } finally {
        await client.end();
      }
    } finally {
      await d?.close().catch(() => undefined);
      await upstream.close();
      await receiver.close();
      if (running) {
        try {
          ctl('stop');
        } catch {
          // already stopped
        }
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
