/** Pieces the features' OpenAPI fragments share, so that an error answer is described one way. */
export const problem = {
  description: 'RFC 9457 problem details',
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
};
// 503: events switched off (EVENTS_DISABLED), draining (UNAVAILABLE), or the store refuses
// writes (STORE_UNAVAILABLE: disk full, read-only, database down), with Retry-After.
const unavailable = {
  ...problem,
  description: 'RFC 9457 problem details: EVENTS_DISABLED, UNAVAILABLE (draining) or STORE_UNAVAILABLE',
  headers: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } },
};

/** The problem answers of these statuses, keyed by status as `responses` wants them. */
export const errors = (...codes: number[]): Record<string, unknown> =>
  Object.fromEntries(codes.map((c) => [String(c), c === 503 ? unavailable : problem]));

/** A JSON body of this schema. */
export const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });

/** The `{id}` of the hook routes. */
export const hookIdParam = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'A hook Id, or its Name (looked up as an Id first)',
  schema: { type: 'string' },
};
