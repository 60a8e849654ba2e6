import { HookdError } from '../errors/index.js';
import type { Hook } from '../hook/index.js';
import { etagOf as hookEtag } from '../hook/index.js';

/** The ETag of a stored hook (src/hook/hook-etag.ts). */
export function etagOf(hook: Pick<Hook, 'Modified'>): string {
  return hookEtag(hook) ?? '"0"';
}

/**
 * Checks `If-Match` against the hook's current ETag; throws 412 PRECONDITION_FAILED when none of
 * the listed tags is it (strong comparison: a weak `W/"…"` never matches). No header: no check.
 */
export function checkIfMatch(header: string | string[] | undefined, hook: Hook): void {
  if (header === undefined) return;
  const text = Array.isArray(header) ? header.join(',') : header;
  const current = etagOf(hook);
  const tags = text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (tags.includes('*') || tags.includes(current)) return;
  const sent = tags.join(', ').slice(0, 200) || '(empty)';
  throw new HookdError(
    'PRECONDITION_FAILED',
    `hook ${hook.Id} was changed since the copy this replace is based on: If-Match ${sent}, but its ETag is now ${current} (Modified ${hook.Modified}); get it again, re-apply the change and retry`,
    { headers: { ETag: current } },
  );
}
