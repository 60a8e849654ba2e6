import { usableCores } from '../../util/index.js';
import { asBool, asNumber, asText, type OptionSpec, refuse } from './spec.js';
import { durationMs, text, trueOrFalse, wholeNumber } from './values.js';

/** Default `clusterLeaseMs`: failover after 10 s of silence, tolerant of a short database hiccup. */
export const DEFAULT_CLUSTER_LEASE_MS = 10_000;

function databaseUrl(v: unknown): string {
  const url = text(v);
  // The value holds a password: the rules name the source and the rule, never the value.
  const protocol = URL.canParse(url) ? new URL(url).protocol : undefined;
  if (protocol === undefined) refuse('must be a URL such as postgres://user:password@host:5432/db');
  else if (protocol !== 'postgres:' && protocol !== 'postgresql:')
    refuse(`must be a postgres:// or postgresql:// URL, not ${protocol}//`);
  return url;
}

/** `workers`: a whole number from 1 to 256, or `auto` (the cores this process may use). */
function workers(v: unknown): number {
  if (v === 'auto') return usableCores();
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 256)
    refuse('must be a whole number from 1 to 256, or auto');
  return v as number;
}

/**
 * `delivery.threads`: a whole number from 0 to 256, or `auto`: the cores this process may use, or
 * none on one core, where a thread beside the core's loop would only add a hop to every attempt.
 */
function deliveryThreads(v: unknown): number {
  if (v === 'auto') {
    const cores = usableCores();
    return cores >= 2 ? cores : 0;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 256)
    refuse('must be a whole number from 0 to 256, or auto');
  return v as number;
}

/** The options of a cluster on PostgreSQL, and of the workers sharing one socket. */
export const CLUSTER_OPTIONS = {
  /**
   * A PostgreSQL URL (`postgres://user:password@host:5432/db`): hooks, users, tokens and
   * deliveries go to that database instead of the SQLite file in the data dir, and several hookd
   * instances may share it (a cluster, docs/DECISIONS.md "Cluster (PostgreSQL)"). Holds a
   * password: never log it unredacted (`redactDatabaseUrl`).
   */
  databaseUrl: {
    fileKey: 'databaseUrl',
    flag: '--database-url <url>',
    env: 'HOOKD_DATABASE_URL',
    description:
      'PostgreSQL URL (postgres://user:pass@host/db) instead of SQLite; several hookd may share it (also HOOKD_DATABASE_URL_FILE)',
    fromText: asText,
    parse: databaseUrl,
  },
  /**
   * `--workers N` (src/workers/): event loops serving the proxy on the shared socket;
   * `auto` is resolved at load to the usable cores (the CPUs, lowered to a cgroup's quota). 1 (the default): one process.
   */
  workers: {
    fileKey: 'workers',
    flag: '--workers <n|auto>',
    env: 'HOOKD_WORKERS',
    description: 'event loops serving the proxy on one socket; auto = the usable cores (default 1)',
    fromText: (t: string): unknown => (t.trim().toLowerCase() === 'auto' ? 'auto' : asNumber(t)),
    parse: workers,
    default: 1,
  },
  /**
   * With `databaseUrl`: how long an instance's claim on its deliveries lasts without a heartbeat,
   * ms. When it runs out (the instance died or lost the database) the others take them over.
   */
  clusterLeaseMs: {
    fileKey: 'cluster.leaseMs',
    flag: '--cluster-lease <ms>',
    env: 'HOOKD_CLUSTER_LEASE_MS',
    description: 'with --database-url: how long a silent instance keeps its deliveries (default 10000)',
    fromText: asNumber,
    parse: wholeNumber(1000, 600000),
    default: DEFAULT_CLUSTER_LEASE_MS,
  },
} as const satisfies Record<string, OptionSpec>;

/** Delivery limits (isolation per endpoint, protection per host) and the store-fault buffer; the pipeline applies the defaults. */
export const DELIVERY_OPTIONS = {
  /** Callback attempts in flight at once over all hosts (default 256). */
  deliveryConcurrency: {
    fileKey: 'delivery.concurrency',
    flag: '--delivery-concurrency <n>',
    env: 'HOOKD_DELIVERY_CONCURRENCY',
    description: 'callback attempts in flight at once, over all hosts (default 256)',
    fromText: asNumber,
    parse: wholeNumber(1, 100_000),
    shownDefault: '256',
  },
  /**
   * Threads that send the callbacks (src/executors/), beside the loop that decides what to send
   * and keeps the store; `0`: that loop sends them itself. `auto` (the default): the usable cores,
   * or 0 where there is one.
   */
  deliveryThreads: {
    fileKey: 'delivery.threads',
    flag: '--delivery-threads <n|auto>',
    env: 'HOOKD_DELIVERY_THREADS',
    description:
      'threads sending callbacks beside the loop that schedules and records them; 0 = that loop sends; auto = the usable cores, 0 on one (default auto)',
    fromText: (t: string): unknown => (t.trim().toLowerCase() === 'auto' ? 'auto' : asNumber(t)),
    parse: deliveryThreads,
    default: 'auto',
  },
  /** Callback attempts in flight at once to one host: scheme, host, port (default 32). */
  deliveryPerHost: {
    fileKey: 'delivery.perHost',
    flag: '--delivery-per-host <n>',
    env: 'HOOKD_DELIVERY_PER_HOST',
    description: 'callback attempts in flight at once to one host (scheme, host, port) (default 32)',
    fromText: asNumber,
    parse: wholeNumber(1, 10_000),
    shownDefault: '32',
  },
  /** Callback attempts in flight at once to one endpoint (callback URL) inside its host (default 8). */
  deliveryPerEndpoint: {
    fileKey: 'delivery.perEndpoint',
    flag: '--delivery-per-endpoint <n>',
    env: 'HOOKD_DELIVERY_PER_ENDPOINT',
    description:
      'callback attempts in flight at once to one endpoint (callback URL), inside its host (default 8)',
    fromText: asNumber,
    parse: wholeNumber(1, 10_000),
    shownDefault: '8',
  },
  /**
   * Each receiver's concurrency limit adapts to its answers (latency against its own baseline,
   * 429/503), between 1 and `deliveryPerEndpoint`; off: every receiver gets the maximum.
   */
  adaptiveConcurrency: {
    fileKey: 'delivery.adaptiveConcurrency',
    flag: '--adaptive-concurrency <on|off>',
    env: 'HOOKD_ADAPTIVE_CONCURRENCY',
    description:
      "adapt each receiver's concurrency to its answers (latency above its own baseline, 429, 503), up to --delivery-per-endpoint (default on)",
    fromText: asBool,
    parse: trueOrFalse('must be on or off (true, false)'),
    default: true,
  },
  /** Deliveries kept in memory while the store refuses writes (default 10,000); more are dropped. */
  storeFaultBuffer: {
    fileKey: 'delivery.faultBuffer',
    flag: '--store-fault-buffer <n>',
    env: 'HOOKD_STORE_FAULT_BUFFER',
    description:
      'fired callbacks kept in memory while the store refuses writes; more are dropped and counted (default 10000)',
    fromText: asNumber,
    parse: wholeNumber(0, 10_000_000),
    shownDefault: '10000',
  },
  /**
   * How long a finished delivery stays in the delivery log (and so in `hookctl deliveries`, the
   * console and redelivery), ms; pending ones are never removed.
   */
  deliveryRetentionMs: {
    fileKey: 'delivery.retention',
    flag: '--delivery-retention <duration>',
    env: 'HOOKD_DELIVERY_RETENTION',
    description:
      'how long finished deliveries stay in the delivery log: seconds or a duration like 12h, 30d (default 7d)',
    fromText: asText,
    parse: durationMs(60, 3650 * 86400, 'must be seconds or a duration like 12h, 7d, 90d (from 1m to 3650d)'),
    default: '7d',
  },
} as const satisfies Record<string, OptionSpec>;

/**
 * A database URL fit for logs and error messages: the password (and any `password=` parameter)
 * replaced by `***`. Something that is not a URL at all is not shown.
 */
export function redactDatabaseUrl(url: string): string {
  if (!URL.canParse(url)) return '(not a URL)';
  const u = new URL(url);
  if (u.password !== '') u.password = '***';
  for (const key of [...u.searchParams.keys()]) {
    if (/pass|secret|key/i.test(key)) u.searchParams.set(key, '***');
  }
  return u.toString();
}
