import type { DeliveryQuery } from './delivery-store.js';

/** Above every Id character (Ids are `msg_` + Crockford base32), so "no cursor" is one more `id <` bound. */
const AFTER_ALL = '~';

/** The WHERE clause of one delivery-log query and its values, in placeholder order. */
export interface DeliveryListFilter {
  where: string;
  values: unknown[];
}

/** How a store spells the n-th (1-based) placeholder and a prefix test of `t_path`. */
export interface FilterDialect {
  param(n: number): string;
  pathPrefix(p: string): string;
}

/**
 * Whether a receiver-status range lies outside 2xx, where the receiver-status index has it. A
 * range within 2xx is most of a hook's deliveries, found reading `(hook_id, id)` newest first; at
 * worst that reads the hook, which retention keeps bounded.
 */
export const outside2xx = (rs: readonly [number, number]): boolean => rs[1] < 200 || rs[0] > 299;

/**
 * Only the filters given become predicates: the `(@x IS NULL OR col = @x)` form hides
 * them from the planner, so `status` and `last_status` could not use their indexes and a selective
 * filter read the whole hook. The text depends only on which filters are set (and whether a
 * receiver-status range lies outside 2xx), so a store can cache one prepared statement per filter
 * set (at most 64).
 */
export function deliveryListFilter(
  hookId: string,
  query: DeliveryQuery,
  d: FilterDialect,
): DeliveryListFilter {
  const values: unknown[] = [];
  const p = (v: unknown): string => {
    values.push(v);
    return d.param(values.length);
  };
  const conds = [`hook_id = ${p(hookId)}`, `id < ${p(query.after ?? AFTER_ALL)}`];
  // The status index holds no succeeded delivery and the receiver-status index no 2xx (both
  // stores' migrations): a filter for what one holds states the index's condition, since a
  // planner takes a partial index only for a query that contains its condition or, by the
  // planner's own rules, implies it, and a bound value proves nothing. The terms change no result.
  if (query.status !== undefined) {
    conds.push(`status = ${p(query.status)}`);
    if (query.status !== 'succeeded') conds.push("status <> 'succeeded'");
  }
  if (query.since !== undefined) conds.push(`created >= ${p(query.since)}`);
  if (query.until !== undefined) conds.push(`created <= ${p(query.until)}`);
  if (query.pathPrefix !== undefined) conds.push(d.pathPrefix(p(query.pathPrefix)));
  const rs = query.receiverStatus;
  if (rs !== undefined) {
    // One code is an equality, so `(hook_id, last_status, id)` also yields the rows newest first.
    conds.push(
      rs[0] === rs[1] ? `last_status = ${p(rs[0])}` : `last_status BETWEEN ${p(rs[0])} AND ${p(rs[1])}`,
    );
    if (outside2xx(rs)) conds.push(`last_status NOT BETWEEN 200 AND 299`);
  }
  return { where: conds.join(' AND '), values };
}
