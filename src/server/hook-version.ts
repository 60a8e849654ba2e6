import { HookdError } from '../errors/catalog.js';
import type { Hook } from '../hook/hook.js';

/**
 * A hook's version for conditional requests (RFC 9110 §8.8.3, §13.1.1): its `Modified` value in
 * quotes. `Modified` changes on every replace (strictly later, see HookService), so the ETag does
 * too, and a client holding the JSON of a hook (`hookctl get > file`) knows the version it read
 * without having kept the header.
 */
export function etagOf(hook: Pick<Hook, 'Modified'>): string {
  return `"${hook.Modified}"`;
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
