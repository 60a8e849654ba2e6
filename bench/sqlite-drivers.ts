/**
 * better-sqlite3 against Node's own `node:sqlite` on the statements hookd's delivery log runs
 * most (better-sqlite3 13 against node:sqlite, both measured): new
 * deliveries inserted a batch of 100 per transaction, then each batch's outcomes (the new state
 * and an attempt record per delivery) a batch per transaction, through prepared statements, on a
 * WAL file with synchronous=NORMAL as hookd opens it. Prints CPU µs per delivery (insert, then
 * outcome) for each driver, alternating, and the medians.
 *
 *   node dist/bench/sqlite-drivers.js [batches=200] [rounds=5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

interface Statement {
  run(...params: unknown[]): unknown;
}
interface Driver {
  name: string;
  open(file: string): { exec(sql: string): void; prepare(sql: string): Statement; close(): void };
}

const requireHere = createRequire(import.meta.url);
const DRIVERS: Driver[] = [
  { name: 'better-sqlite3', open: (file) => new Database(file) },
  {
    name: 'node:sqlite',
    open: (file) => {
      const { DatabaseSync } = requireHere('node:sqlite') as typeof import('node:sqlite');
      const db = new DatabaseSync(file);
      return { exec: (s) => db.exec(s), prepare: (s) => db.prepare(s), close: () => db.close() };
    },
  },
];

const SCHEMA = `
  PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
  CREATE TABLE deliveries (id TEXT PRIMARY KEY, hook_id TEXT NOT NULL, owner TEXT NOT NULL,
    status TEXT NOT NULL, created INTEGER NOT NULL, next_at INTEGER, attempts INTEGER NOT NULL,
    request TEXT NOT NULL);
  CREATE INDEX deliveries_hook ON deliveries (hook_id, created);
  CREATE INDEX deliveries_owner ON deliveries (owner, created);
  CREATE INDEX deliveries_pending ON deliveries (next_at) WHERE status = 'pending';
  CREATE TABLE attempts (delivery_id TEXT NOT NULL, n INTEGER NOT NULL, at INTEGER NOT NULL,
    status INTEGER, ms REAL, PRIMARY KEY (delivery_id, n));`;

const BATCH = 100;
const BODY = JSON.stringify({ text: 'repository r1: time series ts1 written', n: 1 }).repeat(4);

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

function round(driver: Driver, batches: number): { insert: number; outcome: number } {
  const dir = mkdtempSync(join(tmpdir(), 'hookd-sqlite-drivers-'));
  const db = driver.open(join(dir, 'bench.db'));
  try {
    db.exec(SCHEMA);
    const insert = db.prepare(
      'INSERT INTO deliveries (id, hook_id, owner, status, created, next_at, attempts, request) VALUES (?, ?, ?, ?, ?, ?, 0, ?)',
    );
    const update = db.prepare(
      'UPDATE deliveries SET status = ?, next_at = ?, attempts = attempts + 1 WHERE id = ?',
    );
    const attempt = db.prepare(
      'INSERT INTO attempts (delivery_id, n, at, status, ms) VALUES (?, ?, ?, ?, ?)',
    );
    const id = (b: number, i: number) => `d${String(b).padStart(6, '0')}${String(i).padStart(3, '0')}`;
    const now = Date.now();
    let t = cpuUs();
    for (let b = 0; b < batches; b++) {
      db.exec('BEGIN');
      for (let i = 0; i < BATCH; i++)
        insert.run(id(b, i), `h${i % 20}`, `u${i % 2}`, 'pending', now, now, BODY);
      db.exec('COMMIT');
    }
    const insertUs = (cpuUs() - t) / (batches * BATCH);
    t = cpuUs();
    for (let b = 0; b < batches; b++) {
      db.exec('BEGIN');
      for (let i = 0; i < BATCH; i++) {
        const ok = i % 10 !== 0;
        update.run(ok ? 'delivered' : 'pending', ok ? null : now + 5000, id(b, i));
        attempt.run(id(b, i), 1, now, ok ? 200 : 503, 3.5);
      }
      db.exec('COMMIT');
    }
    return { insert: insertUs, outcome: (cpuUs() - t) / (batches * BATCH) };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const batches = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 5);
const seen = new Map<string, { insert: number[]; outcome: number[] }>();
for (let r = 0; r < rounds; r++) {
  for (const d of r % 2 === 0 ? DRIVERS : [...DRIVERS].reverse()) {
    const x = round(d, batches);
    const s = seen.get(d.name) ?? { insert: [], outcome: [] };
    s.insert.push(x.insert);
    s.outcome.push(x.outcome);
    seen.set(d.name, s);
    console.log(
      `round ${r + 1} ${d.name}: insert ${x.insert.toFixed(2)} µs, outcome ${x.outcome.toFixed(2)} µs`,
    );
  }
}
for (const [name, s] of seen) {
  console.log(
    `${name}: median CPU per delivery: insert ${median(s.insert).toFixed(2)} µs, outcome (state + attempt) ${median(s.outcome).toFixed(2)} µs`,
  );
}
