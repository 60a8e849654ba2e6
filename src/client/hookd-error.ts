import type { Problem } from './types.js';

/**
 * Every failure of a hookd/client call: an error answer with its RFC 9457 problem document, or
 * (status 0) no answer at all. Branch on `code`, hookd's stable error codes (docs/API.md
 * "Errors"), never on the message's words.
 */
export class HookdError extends Error {
  /** The HTTP status; 0 when hookd could not be reached or did not answer in time. */
  readonly status: number;
  /**
   * hookd's code (`VALIDATION_FAILED`, `NOT_FOUND`, `STORE_UNAVAILABLE`, …); for failures without a
   * problem document: `UNREACHABLE` (no answer), `TIMEOUT` (no answer in time) or
   * `UNEXPECTED_RESPONSE` (an answer that is not hookd's, such as a proxy's HTML page).
   */
  readonly code: string;
  /** The whole problem document (for failures without one, one made here in the same shape). */
  readonly problem: Problem;
  /** The names of the invalid fields (`errors[].field`), in the document's order. */
  readonly fields: string[];
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  readonly retryAfterSeconds: number | undefined;
  /** The method and path of the call, e.g. `POST /hooks`. */
  readonly request: string;
  /** The error answer as it came (its first 64 KiB), for a caller that reads answers not hookd's. */
  readonly response: { contentType: string; text: string } | undefined;

  constructor(
    problem: Problem,
    request: string,
    opts: {
      retryAfterSeconds?: number;
      cause?: unknown;
      response?: { contentType: string; text: string };
    } = {},
  ) {
    super(problem.detail, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'HookdError';
    this.status = problem.status;
    this.code = problem.code;
    this.problem = problem;
    this.fields = (problem.errors ?? []).map((e) => e.field);
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.request = request;
    this.response = opts.response;
  }
}

/** A problem document for a failure the server did not describe itself. */
export function localProblem(status: number, code: string, title: string, detail: string): Problem {
  return {
    type: `urn:hookd:problem:${code.toLowerCase().replaceAll('_', '-')}`,
    title,
    status,
    detail,
    code,
  };
}

/** Reads an error answer: hookd's problem document, or a readable stand-in for anything else. */
export function problemOf(status: number, contentType: string, text: string, request: string): Problem {
  let parsed: unknown;
  if (/json/i.test(contentType) || /^\s*\{/.test(text)) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const { errors: listed, ...p } = parsed as Record<string, unknown>;
    if (typeof p.code === 'string') {
      // Every member is kept (an entry's line and column, an extension of a proxy's): only the
      // ones the type promises are filled in where the answer lacks them.
      const errors = Array.isArray(listed)
        ? listed
            .filter((e): e is Record<string, unknown> => e !== null && typeof e === 'object')
            .map((e) => ({
              ...e,
              field: String(e.field ?? '(body)'),
              message: String(e.message ?? 'is invalid'),
            }))
        : undefined;
      return {
        ...p,
        type: typeof p.type === 'string' ? p.type : 'about:blank',
        title: typeof p.title === 'string' ? p.title : `HTTP ${status}`,
        status,
        detail: typeof p.detail === 'string' ? p.detail : String(p.title ?? `HTTP ${status}`),
        code: p.code,
        ...(errors !== undefined && { errors }),
      };
    }
  }
  const heading = /<(title|h1)[^>]*>([^<]{1,120})</i.exec(text)?.[2]?.replace(/\s+/g, ' ').trim();
  const snippet = heading ?? text.replace(/\s+/g, ' ').trim().slice(0, 200);
  return localProblem(
    status,
    'UNEXPECTED_RESPONSE',
    'Not an answer of hookd',
    `${request}: HTTP ${status}${snippet ? `: ${snippet}` : ''} (not a problem document of hookd: is the base URL right?)`,
  );
}
