import { CommanderError } from 'commander';

/**
 * hookctl's exit codes (SPEC §11, man hookctl). Scripts branch on them, so they are decided here
 * and nowhere else: commands throw the errors below and `exitCodeOf` maps them.
 */
export const EXIT = {
  /** Success, an empty list included. */
  OK: 0,
  /** The server refused the request or failed (its problem detail is printed). */
  API: 1,
  /** Wrong usage, or a hook file that is not valid JSON. */
  USAGE: 2,
  /** The daemon could not be reached. */
  UNREACHABLE: 3,
  /** Authentication failed, or no token was found. */
  AUTH: 4,
  /**
   * `apply` and `diff` only (kubectl diff's rule "0 none, 1 differences, >1 error"):
   * apply made changes, or diff / apply --dry-run found some; everything asked went through.
   */
  CHANGED: 1,
  /** `apply` and `diff` only: the server refused (or the local checks found invalid) at least one hook. */
  REFUSED: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A problem entry of an RFC 9457 validation error. */
export interface ProblemFieldError {
  field: string;
  message: string;
}

/** The parts of a problem+json document hookctl reads. */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  errors?: ProblemFieldError[];
  /** The answer was an HTML page, not hookd's problem+json: someone else answered. */
  html?: boolean;
}

/** Base class: a message for the user, an optional hint, and the exit code it maps to. */
export class CliError extends Error {
  readonly hint: string | undefined;
  constructor(message: string, hint?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CliError';
    this.hint = hint;
  }
}

/** Wrong usage that commander cannot see: conflicting flags, a bad argument value, an unreadable file. */
export class UsageError extends CliError {
  /** The usage line of the command, printed after the message. */
  readonly usage: string | undefined;
  constructor(message: string, opts: { hint?: string; usage?: string } = {}) {
    super(message, opts.hint);
    this.name = 'UsageError';
    this.usage = opts.usage;
  }
}

/** A hook file that is not valid JSON; the message is `FILE:LINE:COLUMN: what`. */
export class JsonFileError extends CliError {
  constructor(message: string) {
    super(message);
    this.name = 'JsonFileError';
  }
}

/** The server answered with an error status (other than 401). */
export class ApiError extends CliError {
  readonly status: number;
  readonly problem: Problem;
  constructor(status: number, problem: Problem, hint?: string) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`, hint);
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
  }
}

/** 401 from the server, or no token to send. */
export class AuthError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, hint);
    this.name = 'AuthError';
  }
}

/** Connection refused, unknown host, timeouts: the daemon is not there. */
export class UnreachableError extends CliError {
  readonly url: string;
  constructor(url: string, reason: string, cause?: unknown, hint?: string) {
    super(
      `cannot reach hookd at ${url}: ${reason}`,
      hint ??
        'is hookd running? check with: systemctl status hookd, or start it with: hookd --listen HOST:PORT; point hookctl at it with --server URL or HOOKD_URL',
      { cause },
    );
    this.name = 'UnreachableError';
    this.url = url;
  }
}

/** A failure that a command has already reported on stderr; only its exit code is left to apply. */
export class ReportedError extends Error {
  readonly exitCode: ExitCode;
  constructor(exitCode: ExitCode) {
    super(`exit ${exitCode}`);
    this.name = 'ReportedError';
    this.exitCode = exitCode;
  }
}

/** The one mapping from what went wrong to the process exit code. */
export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof ReportedError) return err.exitCode;
  if (err instanceof CommanderError) {
    // --help, `help CMD` and --version end in a CommanderError with exit code 0; the rest is usage.
    return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  }
  if (err instanceof UsageError || err instanceof JsonFileError) return EXIT.USAGE;
  if (err instanceof AuthError) return EXIT.AUTH;
  if (err instanceof UnreachableError) return EXIT.UNREACHABLE;
  if (err instanceof ApiError) return EXIT.API;
  // Anything else is a bug in hookctl or an unexpected local failure (disk full, …).
  return EXIT.API;
}

/** Writes the error the way every command reports it; stack traces only with --debug. */
export function formatError(err: unknown, opts: { debug: boolean; paint?: (s: string) => string }): string {
  const red = opts.paint ?? ((s: string) => s);
  const lines: string[] = [];
  if (err instanceof ApiError) {
    const errors = err.problem.errors ?? [];
    const head = errors.length ? summary(err.message, errors) : err.message;
    if (head === undefined && errors.length === 1) {
      // One field: one line, not a headline that only repeats it.
      lines.push(`${red('error:')} ${errors[0]!.field}: ${errors[0]!.message}`);
    } else {
      lines.push(`${red('error:')} ${head ?? `${errors.length} fields are not valid`}`);
      // One line per field: the detail's own list of them is not printed a second time.
      for (const e of errors) lines.push(`  - ${e.field}: ${e.message}`);
    }
  } else if (err instanceof UsageError) {
    lines.push(`${red('error:')} ${err.message}`);
    if (err.usage) lines.push(`usage: ${err.usage}`);
  } else if (err instanceof CliError) {
    lines.push(`${red('error:')} ${err.message}`);
  } else if (err instanceof Error) {
    lines.push(`${red('error:')} ${err.message}`);
  } else {
    lines.push(`${red('error:')} ${String(err)}`);
  }
  if (err instanceof CliError && err.hint) lines.push(`hint: ${err.hint}`);
  if (opts.debug && err instanceof Error && err.stack) {
    lines.push(err.stack);
    if (err.cause instanceof Error && err.cause.stack) lines.push(`caused by: ${err.cause.stack}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The head of a validation problem's detail: hookd's reads "the hook has 2 errors: A …; B …" and
 * the fields follow one per line, so only "the hook has 2 errors" is kept.
 */
function summary(detail: string, errors: ProblemFieldError[]): string | undefined {
  const mentions = errors.some((e) => detail.includes(e.message));
  if (!mentions) return detail;
  const colon = detail.indexOf(': ');
  const head = colon > 0 ? detail.slice(0, colon) : '';
  // "Scopes: [1] …" or "Events[0] must be …" is one field's message, not a headline: undefined
  // lets the caller print the fields alone.
  if (head === '' || errors.some((e) => e.field === head || detail.startsWith(e.field))) return undefined;
  return head;
}

/** Hints for problem codes where the next step is not obvious from the detail. */
export function hintFor(problem: Problem, path: string): string | undefined {
  if (problem.detail?.startsWith('no operations resource')) {
    return "--server points at hookd's operations listener (--ops-listen: metrics and health); the API is on its main listener (--listen, default http://127.0.0.1:8470)";
  }
  if (problem.html) {
    return "that answer came from something other than hookd's API (the upstream behind hookd's proxy?): --server is the address hookd listens on plus its --api-base, which is / unless set (e.g. http://127.0.0.1:8470)";
  }
  if (problem.code === undefined && problem.status === 404) {
    return 'no such endpoint here: is --server right, with the API base path (e.g. http://host:8470/api)? an older hookd may lack it';
  }
  switch (problem.code) {
    case 'NOT_FOUND':
      // hookd's catch-all 404 says "no API resource at …": an endpoint this daemon does not have.
      if (problem.detail?.startsWith('no API resource')) {
        return 'this hookd does not serve this endpoint; is it older than hookctl?';
      }
      if (/^\/hooks\/[^/]+/.test(path)) return 'list your hooks with: hookctl list';
      return undefined;
    case 'PAYLOAD_TOO_LARGE':
      return 'the limit is hookd --body-limit (bytes)';
    case 'FORBIDDEN':
      // A report or dry run in another user's name takes the report permission.
      if (/made by its caller/.test(problem.detail ?? ''))
        return 'leave --user out, or ask the admin for the report permission (hookctl users grant NAME --permission report)';
      return 'this operation needs the admin token (<data-dir>/admin.token)';
    case 'CONFLICT':
      if (/disabled/.test(problem.detail ?? '')) {
        const id = /^\/hooks\/([^/]+)/.exec(path)?.[1];
        return `replace the hook to enable it: hookctl edit ${id ?? 'ID'} (or hookctl get, then hookctl replace)`;
      }
      return undefined;
    default:
      return undefined;
  }
}
