/**
 * Writes hooks straight into a data dir's SQLite store, in one transaction, before hookd starts:
 * creating 100,000 hooks through the API would measure the API, not the daemon.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { STORE_FILE } from '../../src/daemon/hookd.js';
import { AFTER_COMPLETION, BEFORE_COMPLETION, type Hook, isoTimestamp } from '../../src/hook/hook.js';
import { newHookId } from '../../src/hook/hook-id.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

/** Owner of seeded hooks: the user hookd bootstraps on its first start. */
export const SEED_OWNER = 'admin';

/**
 * A hook that the bench's requests never match: `/svc-N/items/(*)` and a few other shapes,
 * half BeforeCompletion and half AfterCompletion so that a proxied request walks both indexes.
 */
export function nonMatchingHook(i: number, callback: string): Hook {
  const shapes = [
    `/svc-${i}/items/(*)`,
    `/svc-${i}/orders/*/lines/(*)`,
    `/repositories/repo-${i}/timeseries/(*)`,
    `/tenants/t-${i}/events/(*)/$`,
  ];
  return {
    Id: newHookId(),
    Owner: SEED_OWNER,
    PathPattern: shapes[i % shapes.length]!,
    Callback: callback,
    Methods: ['*'],
    Type: i % 2 === 0 ? BEFORE_COMPLETION : AFTER_COMPLETION,
    StatusCodeBlackList: [],
    StatusCodeWhiteList: [],
    CallbackMethod: 'POST',
    CallbackContentMediaType: 'application/json',
    Headers: {},
    Persist: true,
    Modified: isoTimestamp(),
    State: 'active',
  };
}

/** Puts `count` hooks made by `make` into the store of `dataDir`; returns the milliseconds taken. */
export async function seedHooks(
  dataDir: string,
  count: number,
  make: (i: number) => Hook = (i) => nonMatchingHook(i, 'http://127.0.0.1:9/never'),
): Promise<number> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const t0 = process.hrtime.bigint();
  const store = new SqliteStore(join(dataDir, STORE_FILE));
  try {
    const pending: Promise<void>[] = [];
    // putHook runs its statement synchronously, so the whole batch is one SQLite transaction.
    store.db.transaction(() => {
      for (let i = 0; i < count; i++) pending.push(store.putHook(make(i)));
    })();
    await Promise.all(pending);
  } finally {
    await store.close();
  }
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
