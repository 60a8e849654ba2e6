/**
 * Chooses and opens the storage the configuration asks for: the embedded SQLite file in the data
 * dir (one hookd), or PostgreSQL with `databaseUrl` (one hookd or a cluster of them).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { newInstanceId } from '../cluster/index.js';
import type { HookdConfig } from '../config/index.js';
import type { IdempotencyStore } from '../idempotency/index.js';
import { SqliteIdempotencyStore } from '../idempotency/index.js';
import { type ListenerAttemptStore, PgListenerAttempts, SqliteListenerAttempts } from '../listen/index.js';
import {
  type NotificationStore,
  PgNotificationStore,
  SqliteNotificationStore,
} from '../notifications/index.js';
import { DEFAULT_KEY_FILE, openSecretsKey, type SealedTables, SecretSealer } from '../secrets/index.js';
import { type DeliveryStore, guardStore, type HookStore, type Store } from '../store/index.js';
import { MemoryDeliveryStore, MemoryStore } from '../store/memory/index.js';
import type { LeaseIdentity, PgDatabase } from '../store/postgres/index.js';
import { SqliteDeliveryStore, SqliteSealedMarker, SqliteStore } from '../store/sqlite/index.js';
import { SqliteWriterStore } from '../store/sqlite-writer/index.js';

/** The SQLite file in the data dir. */
export const STORE_FILE = 'hookd.db';

export interface OpenedStores {
  /** Users, tokens and `Persist: true` hooks. */
  store: Store;
  /** `Persist: false` hooks: process memory, or with PostgreSQL the cluster's UNLOGGED table. */
  ephemeralHooks: HookStore;
  /** Deliveries and secrets of `Persist: true` hooks, and of the others. */
  deliveries: { durable: DeliveryStore; ephemeral: DeliveryStore };
  /** Notification endpoints, beside the hooks. */
  notifications: NotificationStore;
  /** `hookctl listen`'s attempts, beside the deliveries. */
  listenerAttempts: ListenerAttemptStore;
  /** `Idempotency-Key`s of reports: in the SQLite file, or shared by the cluster's instances. */
  idempotency: IdempotencyStore;
  /** With PostgreSQL: the database and the lease identity the delivery stores write with. */
  cluster?: { db: PgDatabase; lease: LeaseIdentity };
  /** Where the data is, for logs: the file, or the URL without its password. */
  location: string;
  /** Stops following the secrets key file (a rotation beside the running daemon). */
  unfollowKeyFile: () => void;
  /** Closes the stores, once every write handed to them is done. */
  close: () => Promise<void>;
}

/** The secrets key file this configuration names: `--secrets-key-file`, else beside admin.token. */
export function secretsKeyFile(config: HookdConfig): string {
  return config.secretsKeyFile ?? join(config.dataDir, DEFAULT_KEY_FILE);
}

/**
 * Checks the key file against the stores' secrets and seals what is not sealed yet (src/secrets/);
 * on failure the stores are closed (a database pool would keep the process alive) and the error,
 * which names the file, stops the start.
 */
async function openKey(
  sealer: SecretSealer,
  tables: SealedTables,
  closeStores: () => Promise<void>,
  log: Logger,
): Promise<() => void> {
  try {
    const r = await openSecretsKey(sealer, tables);
    if (r.created) log.info({ file: sealer.file }, 'created the secrets key file');
    if (r.marker === 'kept')
      log.debug(
        { file: sealer.file, key: sealer.currentKeyId },
        `secrets: every value sealed under key ${sealer.currentKeyId}, nothing to walk`,
      );
    if (r.resealed > 0)
      log.info({ file: sealer.file, count: r.resealed }, 'sealed stored secrets with the key file');
  } catch (err) {
    await closeStores().catch(() => undefined);
    throw err;
  }
  return sealer.follow();
}

/**
 * The PostgreSQL modules, loaded on first use: importing `pg` and them is about a tenth of a
 * SQLite daemon's start-up (docs/BENCHMARKS.md "Size"), for nothing when no database URL is set.
 */
async function postgres() {
  const [{ PgDatabase, PgSealedMarker, PostgresStore, PostgresDeliveryStore }, { PostgresIdempotencyStore }] =
    await Promise.all([
      import('../store/postgres/index.js'),
      import('../idempotency/postgres-idempotency-store.js'),
    ]);
  return { PgDatabase, PgSealedMarker, PostgresStore, PostgresDeliveryStore, PostgresIdempotencyStore };
}

/** Opens what the daemon runs on. With PostgreSQL the schema is migrated first (under a lock). */
export async function openStores(config: HookdConfig, log: Logger): Promise<OpenedStores> {
  if (config.databaseUrl) {
    const { PgDatabase, PgSealedMarker, PostgresStore, PostgresDeliveryStore, PostgresIdempotencyStore } =
      await postgres();
    const db = await PgDatabase.open(config.databaseUrl, { log });
    const secrets = new SecretSealer(secretsKeyFile(config));
    const store = new PostgresStore(db, { secrets });
    // Registered when the instance joins the cluster; nothing is written before that.
    const lease: LeaseIdentity = { id: newInstanceId() };
    const durable = new PostgresDeliveryStore(db, { lease, secrets });
    const ephemeral = new PostgresDeliveryStore(db, { lease, ephemeral: true, secrets });
    const unfollowKeyFile = await openKey(
      secrets,
      {
        secrets: [durable, ephemeral],
        credentials: [store.hooks, store.ephemeralHooks, durable, ephemeral],
        marker: new PgSealedMarker(db),
      },
      () => store.close(),
      log,
    );
    return guarded({
      store,
      ephemeralHooks: store.ephemeralHooks,
      deliveries: { durable, ephemeral },
      notifications: new PgNotificationStore(db.pool),
      listenerAttempts: new PgListenerAttempts(db.pool),
      idempotency: new PostgresIdempotencyStore(db),
      cluster: { db, lease },
      location: db.redacted,
      unfollowKeyFile,
      close: () => store.close(),
    });
  }
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const file = join(config.dataDir, STORE_FILE);
  const secrets = new SecretSealer(secretsKeyFile(config));
  // WAL checkpoints stay off the event loop: on the writer thread when there is one, which alone
  // can keep up with its own writes, else on a thread of the store's.
  const threads = config.deliveryThreads > 0;
  const store = new SqliteStore(file, { checkpoint: threads ? 'writer' : 'thread', secrets });
  const reads = new SqliteDeliveryStore(store.db, secrets);
  // With delivery threads the process has cores to spare: the writes go to a thread of their own
  // too, and the event loop that hands out attempts never waits on SQL (decision 0082).
  const writer = threads
    ? new SqliteWriterStore(reads, secrets, {
        file,
        synchronous: store.synchronous,
        checkpointMs: 1000,
      })
    : undefined;
  const durable = writer ?? reads;
  const close = async (): Promise<void> => {
    await writer?.close();
    await store.close();
  };
  const unfollowKeyFile = await openKey(
    secrets,
    { secrets: [durable], credentials: [store, durable], marker: new SqliteSealedMarker(store.db) },
    close,
    log,
  );
  // `Persist: false` hooks and their secrets live in process memory, never on disk.
  const ephemeral = new MemoryDeliveryStore();
  return guarded({
    store,
    ephemeralHooks: new MemoryStore(ephemeral),
    deliveries: { durable, ephemeral },
    notifications: new SqliteNotificationStore(store.db),
    listenerAttempts: new SqliteListenerAttempts(store.db),
    idempotency: new SqliteIdempotencyStore(store.db),
    location: file,
    unfollowKeyFile,
    close,
  });
}

/** Store faults thrown by any of them are marked, for the API's 503 STORE_UNAVAILABLE. */
function guarded(o: OpenedStores): OpenedStores {
  return {
    ...o,
    store: guardStore(o.store),
    ephemeralHooks: guardStore(o.ephemeralHooks),
    deliveries: { durable: guardStore(o.deliveries.durable), ephemeral: guardStore(o.deliveries.ephemeral) },
  };
}

/**
 * The store the admin commands (`hookd user …`, `hookd token …`) work on: the same one the
 * daemon with this configuration uses. It joins no cluster: the running instances follow its
 * changes through the database's notifications (or, with SQLite, by watching the file).
 */
export async function openAdminStore(config: HookdConfig): Promise<Store> {
  if (config.databaseUrl) {
    const { PgDatabase, PostgresStore } = await postgres();
    return new PostgresStore(await PgDatabase.open(config.databaseUrl));
  }
  return new SqliteStore(join(config.dataDir, STORE_FILE));
}

/**
 * The stores' secret tables as stored, for `hookd secrets rotate-key`: it re-seals rows without
 * opening them through a store's codec, beside a running daemon.
 */
export async function openSecretTables(
  config: HookdConfig,
): Promise<{ tables: SealedTables; close: () => Promise<void> }> {
  if (config.databaseUrl) {
    const { PgDatabase, PgSealedMarker, PostgresStore, PostgresDeliveryStore } = await postgres();
    const db = await PgDatabase.open(config.databaseUrl);
    const store = new PostgresStore(db);
    const durable = new PostgresDeliveryStore(db);
    const ephemeral = new PostgresDeliveryStore(db, { ephemeral: true });
    return {
      tables: {
        secrets: [durable, ephemeral],
        credentials: [store.hooks, store.ephemeralHooks, durable, ephemeral],
        marker: new PgSealedMarker(db),
      },
      close: () => db.close(),
    };
  }
  const store = new SqliteStore(join(config.dataDir, STORE_FILE));
  const deliveries = new SqliteDeliveryStore(store.db);
  return {
    tables: {
      secrets: [deliveries],
      credentials: [store, deliveries],
      marker: new SqliteSealedMarker(store.db),
    },
    close: () => store.close(),
  };
}
