/**
 * What a hook change means for this process, whether made here or by another process: the match
 * index follows every change, and the pipeline forgets what it held for a deleted hook.
 */
import type { Logger } from 'pino';
import type { DeliveryPipeline } from '../delivery/index.js';
import type { MatchEngine } from '../engine/index.js';
import { type Hook, sameHook } from '../hook/index.js';
import type { HookChangeListener, HookService } from '../service/index.js';
import type { Store } from '../store/index.js';
import type { UserScopes } from '../users/index.js';
import { withoutYoungGrowth } from '../util/index.js';
import type { Lifecycle } from './lifecycle.js';

export interface HookFollowing {
  store: Store;
  hooks: HookService;
  engine: MatchEngine;
  deliveries: DeliveryPipeline;
  users: UserScopes;
  /** True with a shared database (PostgreSQL): other instances change hooks and deliveries too. */
  clustered: boolean;
  log: Logger;
  life: Lifecycle;
  /** Counts each change offered to the index and whether it was applied (hookd_hook_changes_total). */
  counted?: (source: 'here' | 'database', result: 'applied' | 'current') => void;
}

/** Loads every hook into the index and follows changes from here and elsewhere until stopped. */
export async function followHookChanges(p: HookFollowing): Promise<void> {
  const { store, hooks, engine, deliveries, users, log, life } = p;
  /**
   * Applies a saved hook once: a change made here comes back from a shared database as a
   * notification, and whichever of the two arrives second finds the index holding that version
   * already (recompiling its templates and patterns again would be work for nothing).
   */
  const saved = (h: Hook, source: 'here' | 'database'): void => {
    const before = engine.get(h.Id);
    if (before !== undefined && sameHook(before, h)) {
      p.counted?.(source, 'current');
      return;
    }
    // A changed Callback may point at another origin: it is verified again before its next delivery.
    if (before !== undefined && before.Callback !== h.Callback)
      deliveries.verifier?.forget(new URL(h.Callback).origin);
    engine.hookSaved(h);
    p.counted?.(source, 'applied');
  };
  const follow: HookChangeListener = {
    hookSaved: (h) => saved(h, 'here'),
    hookDeleted: (id) => {
      engine.hookDeleted(id);
      deliveries.hookDeleted(id);
    },
  };
  hooks.onChange(follow);
  /**
   * A hook deleted by another process. In a cluster that process removed the stored deliveries
   * too (an instance through its pipeline, `hookd user remove` with the user): here only what
   * is held in memory goes. With SQLite, `hookd user remove` leaves the deliveries to the daemon.
   */
  const deletedElsewhere = (id: string): void => {
    engine.hookDeleted(id);
    deliveries.hookDeleted(id, p.clustered);
  };
  /** Replaces every hook at once (start, or a resync after changes may have been missed). */
  const replaceAll = (all: Hook[]): void => {
    if (engine.size > 0) {
      const kept = new Set<string>();
      for (const h of all) kept.add(h.Id);
      const gone = [...engine.ids()].filter((id) => !kept.has(id));
      for (const id of gone) deletedElsewhere(id);
    }
    engine.load(all);
  };
  // Changes from elsewhere apply in the order they were read, after the initial load.
  let sync: Promise<void> = Promise.resolve();
  const serially = (what: string, fn: () => void | Promise<void>): void => {
    sync = sync.then(fn).catch((err: unknown) => log.error({ err }, `${what} failed`));
  };
  /** Reloads every hook after notifications may have been lost; tried again until it works. */
  const resyncAll = (): void =>
    serially('resync after a lost database connection', async () => {
      try {
        replaceAll(await hooks.all());
      } catch (err) {
        setTimeout(resyncAll, 1000).unref();
        throw err;
      }
      log.info({ hooks: engine.size }, 'hooks reloaded after the database connection came back');
    });
  // A shared database announces every committed hook change, and each instance's index follows;
  // with SQLite, `hookd user remove` and friends write the file from another process.
  const stopFollowing = await store.coordination.followChanges({
    changed: (changed, deleted) =>
      serially('applying hook changes from the database', () => {
        for (const h of changed) saved(h, 'database');
        // Known here only if it was not this process that deleted it (it applied that already).
        for (const id of deleted) if (engine.get(id) !== undefined) deletedElsewhere(id);
      }),
    resync: () => {
      users.scopes.clear();
      resyncAll();
    },
    userChanged: (name) => users.scopes.changed(name),
    secretChanged: (id) => deliveries.secretChanged(id),
    failed: (err) => log.warn({ err }, 'fetching changed hooks failed; the next change or resync retries'),
    changedElsewhere: () =>
      serially('resync after an external store change', async () => {
        users.scopes.clear();
        const names = (await store.listUsers()).map((u) => u.name);
        replaceAll(await hooks.resync(new Set(names)));
        log.info({ hooks: engine.size }, 'store changed by another process: hooks reloaded');
      }),
  });
  life.defer('following changes made elsewhere', stopFollowing);
  serially('loading hooks', () => withoutYoungGrowth(async () => replaceAll(await hooks.all())));
  await sync;
}
