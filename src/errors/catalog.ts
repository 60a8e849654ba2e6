/**
 * One catalog of every error hookd reports, with a stable code, an HTTP status and a title.
 * The API turns a `HookdError` into RFC 9457 problem details; hookctl maps the `code` back to
 * its exit codes. Domain code throws these and never chooses an HTTP status itself.
 */
export const ERRORS = {
  VALIDATION_FAILED: { status: 400, title: 'Invalid hook' },
  BAD_REQUEST: { status: 400, title: 'Bad request' },
  MALFORMED_JSON: { status: 400, title: 'Malformed JSON' },
  UNAUTHENTICATED: { status: 401, title: 'Authentication required' },
  FORBIDDEN: { status: 403, title: 'Forbidden' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  CONFLICT: { status: 409, title: 'Conflict' },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, title: 'Idempotency key in use' },
  PRECONDITION_FAILED: { status: 412, title: 'Precondition failed' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'Idempotency key reused' },
  UPGRADE_REQUIRED: { status: 426, title: 'Upgrade required' },
  TOO_MANY_REQUESTS: { status: 429, title: 'Too many requests' },
  INTERNAL: { status: 500, title: 'Internal error' },
  BAD_GATEWAY: { status: 502, title: 'Bad gateway' },
  EVENTS_DISABLED: { status: 503, title: 'Events are disabled' },
  UNAVAILABLE: { status: 503, title: 'Service unavailable' },
  IDENTITY_UNAVAILABLE: { status: 503, title: 'Identity provider unavailable' },
  STORE_UNAVAILABLE: { status: 503, title: 'Store unavailable' },
  GATEWAY_TIMEOUT: { status: 504, title: 'Gateway timeout' },
  LOOP_DETECTED: { status: 508, title: 'Loop detected' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

export interface FieldError {
  /** The field, e.g. `Methods[1]` or `Headers.X-Token`. */
  field: string;
  /** The rule it broke, phrased for a person, with a hint where one helps. */
  message: string;
  /** Where in the field's or the body's text the problem is (a syntax error, a Filter, a Transform): 1-based, as editors and `hookctl` count. */
  line?: number;
  column?: number;
}

export class HookdError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly title: string;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    detail: string,
    opts: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = 'HookdError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.title = ERRORS[code].title;
    this.errors = opts.errors;
    this.headers = opts.headers;
  }
}

/** Problem type URIs are stable identifiers, not links: `urn:hookd:problem:validation-failed`. */
export function problemType(code: ErrorCode): string {
  return `urn:hookd:problem:${code.toLowerCase().replaceAll('_', '-')}`;
}
