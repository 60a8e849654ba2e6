import { HookdError } from '../../errors/index.js';
import { etagOf, validateHook } from '../../hook/index.js';
import type { HookView } from '../api-views.js';
import { offlineSchemeCheck } from '../offline-scheme-check.js';
import type { HookFileEntry } from './load-files.js';

export type Action = 'created' | 'configured' | 'unchanged' | 'pruned';

/** What apply does for one Name, and what diff shows for it. */
export interface Step {
  name: string;
  action: Action;
  /** The hook file it comes from; absent for a prune. */
  entry?: HookFileEntry;
  /** The server's hook as read (configure, unchanged, prune). */
  live?: HookView;
  /** Its version when read: sent as If-Match, so a change made since is refused (412). */
  etag?: string;
  /** Canonical JSON of the server's hook and of the file's ('' when there is none). */
  liveText: string;
  fileText: string;
}

/** A file hook the local checks refuse: it fails without a request (the server would refuse it too). */
export interface Invalid {
  entry: HookFileEntry;
  error: HookdError;
}

/**
 * The plan: each file hook is created when the caller has no hook of that Name, configured when
 * the canonical forms differ, unchanged otherwise; with `prune`, the caller's named hooks that no
 * file names are pruned (unnamed hooks never are: they are not managed as code).
 */
export async function planHooks(
  entries: HookFileEntry[],
  live: HookView[],
  prune: boolean,
): Promise<{ steps: Step[]; invalid: Invalid[] }> {
  const byName = new Map<string, HookView>();
  for (const h of live) if (typeof h.Name === 'string') byName.set(h.Name, h);
  const steps: Step[] = [];
  const invalid: Invalid[] = [];
  for (const entry of entries) {
    let fileText: string;
    try {
      fileText = await canonical(entry.doc);
    } catch (e) {
      if (e instanceof HookdError) {
        invalid.push({ entry, error: e });
        continue;
      }
      throw e;
    }
    const current = byName.get(entry.name);
    if (!current) {
      steps.push({ name: entry.name, action: 'created', entry, liveText: '', fileText });
      continue;
    }
    const liveText = await canonical(current);
    const etag = etagOf(current);
    steps.push({
      name: entry.name,
      action: liveText === fileText ? 'unchanged' : 'configured',
      entry,
      live: current,
      ...(etag !== undefined && { etag }),
      liveText,
      fileText,
    });
  }
  if (prune) {
    const wanted = new Set(entries.map((e) => e.name));
    for (const [name, h] of byName) {
      if (wanted.has(name)) continue;
      const etag = etagOf(h);
      steps.push({
        name,
        action: 'pruned',
        live: h,
        ...(etag !== undefined && { etag }),
        liveText: await canonical(h),
        fileText: '',
      });
    }
  }
  steps.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { steps, invalid };
}

/**
 * A hook as the comparison sees it: normalised as the server stores it (defaults filled in,
 * methods upper-case…), without what the server makes (Id, Owner, Modified, State, the signing
 * secret), keys sorted, indented. Two documents that would store the same hook read the same.
 */
export async function canonical(doc: unknown): Promise<string> {
  const config = await validateHook(doc, await offlineSchemeCheck());
  return `${JSON.stringify(sortKeys(config), null, 2)}\n`;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k]);
  return out;
}
