/**
 * Console overview at scale: a hookd whose store holds N deliveries (default
 * 1,000,000) of one user, spread over 7 days and 100 hooks, with a few thousand still pending; the
 * overview page (`GET /_hookd/console/`) and the hook list (24 h sparklines, last status) are
 * fetched over loopback from a signed-in session, repeatedly, and timed. SQLite always;
 * PostgreSQL too when it answers at HOOKD_TEST_DATABASE_URL (default the local server).
 *
 *   npm run build && node dist/bench/console.js [--deliveries N] [--rounds R] [--no-pg]
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { newDeliveryId } from '../src/delivery/delivery-id.js';
import type { AttemptRecord, DeliveryRecord, DeliveryStore } from '../src/store/delivery-store.js';
import { emptyBatch } from '../src/store/delivery-store.js';
import { PgDatabase } from '../src/store/postgres/pg-database.js';
import { PostgresDeliveryStore } from '../src/store/postgres/postgres-delivery-store.js';
import { SqliteDeliveryStore } from '../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { startHookd, tempDir } from './lib/peers.js';
import { fmt, percentileSorted, table } from './lib/stats.js';

// 100 hooks: 10,000 deliveries each at 1M, the daemon's default per-hook retention, so none is pruned.
const HOOKS = 100;
const WEEK = 7 * 86_400_000;

interface Options {
  deliveries: number;
  rounds: number;
  pg: boolean;
}

function parse(argv: string[]): Options {
  const o: Options = { deliveries: 1_000_000, rounds: 40, pg: true };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--deliveries') o.deliveries = Number(argv[++i]);
    else if (argv[i] === '--rounds') o.rounds = Number(argv[++i]);
    else if (argv[i] === '--no-pg') o.pg = false;
  }
  return o;
}

/** Writes N deliveries (and one or two attempts each) in batches, oldest first, as the outbox would. */
async function fill(store: DeliveryStore, owner: string, hookIds: string[], n: number): Promise<number> {
  const t0 = Date.now();
  const now = Date.now();
  // Inside the 7-day retention for the whole run.
  const start = now - WEEK + 3_600_000;
  const step = (now - start) / n;
  const BATCH = 5000;
  for (let i = 0; i < n; i += BATCH) {
    const batch = emptyBatch();
    for (let j = i; j < Math.min(n, i + BATCH); j++) {
      const created = Math.floor(start + j * step);
      const hookId = hookIds[j % hookIds.length]!;
      // The newest few thousand are still pending; of the rest one in twenty failed.
      const status = j >= n - 2000 ? 'pending' : j % 20 === 0 ? 'failed' : 'succeeded';
      const attempts = status === 'failed' ? 2 : status === 'pending' ? 0 : 1;
      const d: DeliveryRecord = {
        id: newDeliveryId(created),
        hookId,
        owner,
        hookType: 1,
        status,
        attempts,
        roundStart: 0,
        created,
        nextAttempt: status === 'pending' ? now : null,
        lastStatusCode: status === 'succeeded' ? 200 : status === 'failed' ? 500 : null,
        lastError: null,
        trigger: { method: 'POST', path: `/items/${j}`, statusCode: 200 },
        request: { method: 'POST', url: 'https://receiver.example/hook', headers: {}, body: '{"n":1}' },
      };
      batch.inserts.push(d);
      for (let a = 1; a <= attempts; a++) {
        const att: AttemptRecord = {
          deliveryId: d.id,
          hookId,
          attempt: a,
          time: created + a * 10,
          statusCode: status === 'failed' ? 500 : 200,
          latencyMs: 5 + (j % 400),
          error: null,
          responseBody: 'ok',
        };
        batch.attempts.push(att);
      }
    }
    await store.write(batch);
  }
  return Date.now() - t0;
}

interface Timing {
  store: string;
  fillS: number;
  overview: number[];
  hooks: number[];
  /** The delivery log of one hook (10,000 of its deliveries at 1M): newest page and each filter. */
  log: { name: string; ms: number[] }[];
}

/**
 * The console's list and filter queries: a hook's delivery log as the page refreshes
 * it (`part=log`, an htmx request: the log alone), unfiltered and with each filter, including one
 * that matches nothing (the whole hook's deliveries are looked at).
 */
const LOG_QUERIES: [string, string][] = [
  ['log: newest 25', ''],
  ['log: status=failed', 'status=failed'],
  ['log: status=pending', 'status=pending'],
  ['log: path prefix', 'path=%2Fitems%2F5'],
  ['log: receiver 5xx', 'receiver=5xx'],
  ['log: receiver 2xx', 'receiver=2xx'],
  ['log: receiver 404 (none)', 'receiver=404'],
  ['log: last 24 h', 'since=SINCE'],
  ['log: all filters', 'status=succeeded&path=%2Fitems%2F9&receiver=2xx&since=SINCE'],
  ['log: older page', 'after=AFTER'],
];

/**
 * Signs in; tried again after a refused connection: right after a 1,000,000-row fill the daemon's
 * first requests can meet a keep-alive socket it closed while busy (seen as "other side closed").
 */
async function signIn(url: string, token: string): Promise<string> {
  for (let i = 0; ; i++) {
    try {
      return await signInOnce(url, token);
    } catch (err) {
      if (i >= 4) throw err;
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

async function signInOnce(url: string, token: string): Promise<string> {
  const form = await fetch(`${url}/_hookd/console/signin`);
  const pre = form.headers.getSetCookie()[0]!.split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const res = await fetch(`${url}/_hookd/console/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, token }),
  });
  return res.headers.getSetCookie()[0]!.split(';')[0]!;
}

async function time(url: string, cookie: string, rounds: number, htmx = false): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < rounds + 3; i++) {
    const t0 = performance.now();
    const res = await fetch(url, { headers: { cookie, ...(htmx && { 'hx-request': 'true' }) } });
    await res.text();
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    if (i >= 3) out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

async function measure(kind: 'sqlite' | 'postgres', o: Options, log: (s: string) => void): Promise<Timing> {
  const dataDir = tempDir('console');
  let databaseUrl: string | undefined;
  let dropDb: (() => Promise<void>) | undefined;
  if (kind === 'postgres') {
    const admin = process.env.HOOKD_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    const name = `hookd_bench_console_${process.pid}`;
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    await c.query(`CREATE DATABASE ${name}`);
    await c.end();
    const u = new URL(admin);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
    dropDb = async () => {
      const c2 = new pg.Client({ connectionString: admin });
      await c2.connect();
      await c2.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c2.end();
    };
  }
  const hookd = await startHookd({
    core: undefined,
    dataDir,
    extraArgs: databaseUrl ? ['--database-url', databaseUrl] : [],
  });
  try {
    const hookIds: string[] = [];
    for (let i = 0; i < HOOKS; i++) {
      const res = await fetch(`${hookd.url}/hooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${hookd.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          PathPattern: `/items${i}/(*)`,
          Methods: ['*'],
          Type: 1,
          Callback: 'https://receiver.example/hook',
        }),
      });
      hookIds.push(((await res.json()) as { Id: string }).Id);
    }
    log(`${kind}: filling ${o.deliveries} deliveries…`);
    let fillMs: number;
    if (kind === 'sqlite') {
      const s = new SqliteStore(join(dataDir, 'hookd.db'));
      fillMs = await fill(new SqliteDeliveryStore(s.db), 'admin', hookIds, o.deliveries);
      await s.close();
    } else {
      const db = await PgDatabase.open(databaseUrl!);
      fillMs = await fill(new PostgresDeliveryStore(db), 'admin', hookIds, o.deliveries);
      await db.pool.query('ANALYZE');
      await db.close();
    }
    log(`${kind}: filled in ${fmt(fillMs / 1000)} s; timing`);
    // The console is an origin of its own; the API stays on hookd's listener.
    const web = hookd.consoleUrl || hookd.url;
    const cookie = await signIn(web, hookd.token);
    const overview = await time(`${web}/_hookd/console/`, cookie, o.rounds);
    const hooks = await time(`${web}/_hookd/console/hooks`, cookie, o.rounds);
    const hook = hookIds[HOOKS / 2]!;
    const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 16);
    const page = (await (
      await fetch(`${hookd.url}/hooks/${hook}/deliveries?limit=500`, {
        headers: { authorization: `Bearer ${hookd.token}` },
      })
    ).json()) as { Id: string }[];
    const after = page[page.length - 1]!.Id;
    const logTimes: Timing['log'] = [];
    for (const [name, q] of LOG_QUERIES) {
      const query = q.replace('SINCE', encodeURIComponent(since)).replace('AFTER', after);
      const url = `${web}/_hookd/console/hooks/${hook}?${query}${query ? '&' : ''}part=log`;
      logTimes.push({ name, ms: await time(url, cookie, o.rounds, true) });
    }
    return { store: kind, fillS: fillMs / 1000, overview, hooks, log: logTimes };
  } catch (err) {
    log(`hookd output:\n${hookd.running.lines.slice(-20).join('\n')}\n${hookd.running.stderr()}`);
    throw err;
  } finally {
    await hookd.stop();
    await dropDb?.();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function runConsoleBench(o: Options, log: (s: string) => void): Promise<string> {
  const results: Timing[] = [await measure('sqlite', o, log)];
  if (o.pg) {
    try {
      results.push(await measure('postgres', o, log));
    } catch (err) {
      log(`postgres skipped: ${(err as Error).message}`);
    }
  }
  const ms = (xs: number[], p: number) => `${fmt(percentileSorted(xs, p))} ms`;
  const logTable = table(
    ['store', 'query', 'p50', 'p95'],
    results.flatMap((r) => r.log.map((l) => [r.store, l.name, ms(l.ms, 50), ms(l.ms, 95)])),
  );
  const main = table(
    ['store', 'deliveries', 'fill', 'overview p50', 'overview p95', 'hook list p50', 'hook list p95'],
    results.map((r) => [
      r.store,
      o.deliveries.toLocaleString('en'),
      `${fmt(r.fillS)} s`,
      ms(r.overview, 50),
      ms(r.overview, 95),
      ms(r.hooks, 50),
      ms(r.hooks, 95),
    ]),
  );
  return `${main}\n\n${logTable}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const o = parse(process.argv.slice(2));
  console.log(await runConsoleBench(o, (s) => console.error(s)));
}
