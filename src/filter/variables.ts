/**
 * The names a Filter may read, all read-only. `request` and `response` have a fixed set of
 * fields, so a misspelt one is caught when the hook is saved; below those fields (a header, a
 * query parameter, a key of the body) the names are the request's own and only known at run time.
 */

/** The fields of `request`. */
export const REQUEST_FIELDS = [
  'method',
  'path',
  'uri',
  'query',
  'queryAll',
  'headers',
  'user',
  'body',
  'bodyTruncated',
] as const;

/** The fields of `response`: AfterCompletion hooks only. */
export const RESPONSE_FIELDS = ['status', 'headers', 'body', 'bodyTruncated'] as const;

/** The top-level names. */
export const TOP_NAMES = ['request', 'response', 'captures'] as const;

/**
 * Request headers a filter never sees: credentials, and the identity header the daemon names
 * (passed in). Compared in lower case.
 */
export const HIDDEN_HEADERS: readonly string[] = ['authorization', 'cookie', 'proxy-authorization'];

/** The longest Filter accepted, in characters. */
export const MAX_FILTER_LENGTH = 4096;
/** The deepest nesting of a Filter's expression tree. */
export const MAX_FILTER_DEPTH = 32;

export type FilterValue = null | boolean | number | string | FilterValue[] | { [k: string]: FilterValue };

/** What a filter reads about the request (and, after completion, the response). */
export interface FilterRequest {
  method: string;
  path: string;
  uri: string;
  query: Record<string, string>;
  queryAll: Record<string, string[]>;
  headers: Record<string, string>;
  user: string | null;
  body: FilterValue;
  bodyTruncated: boolean;
}

export interface FilterResponse {
  status: number;
  headers: Record<string, string>;
  body: FilterValue;
  bodyTruncated: boolean;
}

export interface FilterInput {
  request: FilterRequest;
  captures: string[];
  response?: FilterResponse;
}
