import type { FieldError } from '../errors/index.js';

/** The largest `limit` a list endpoint accepts. */
export const MAX_PAGE = 1000;

/**
 * `?limit=N&after=ID` of a list endpoint (hooks, deliveries): `limit` a whole number from 1 to
 * 1000, `after` an Id of the listed kind. Problems are added to `errors`, named by parameter.
 */
export function parsePageQuery(
  q: Record<string, unknown>,
  after: { shape: RegExp; rule: string },
  errors: FieldError[],
): { limit?: number; after?: string } {
  const page: { limit?: number; after?: string } = {};
  const limit = q.limit;
  if (limit !== undefined) {
    if (
      typeof limit !== 'string' ||
      !/^\d{1,7}$/.test(limit) ||
      Number(limit) < 1 ||
      Number(limit) > MAX_PAGE
    ) {
      errors.push({ field: 'limit', message: `must be a whole number from 1 to ${MAX_PAGE}` });
    } else page.limit = Number(limit);
  }
  if (q.after !== undefined) {
    if (typeof q.after !== 'string' || !after.shape.test(q.after))
      errors.push({ field: 'after', message: after.rule });
    else page.after = q.after;
  }
  return page;
}
