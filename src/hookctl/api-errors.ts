import { STATUS_CODES } from 'node:http';
import { ApiError, AuthError, hintFor, type Problem, UnreachableError } from './exit-codes.js';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** Reads an error body: problem+json when the server is hookd, something readable otherwise. */
function toProblem(status: number, parsed: unknown, text: string, path: string): Problem {
  if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const p = parsed as Record<string, unknown>;
    const problem: Problem = { status };
    if (typeof p.title === 'string') problem.title = p.title;
    if (typeof p.detail === 'string') problem.detail = p.detail;
    if (typeof p.code === 'string') problem.code = p.code;
    if (typeof p.type === 'string') problem.type = p.type;
    if (Array.isArray(p.errors)) {
      problem.errors = p.errors
        .filter((e): e is { field: unknown; message: unknown } => e !== null && typeof e === 'object')
        .map((e) => ({ field: String(e.field ?? '(body)'), message: String(e.message ?? 'is invalid') }));
    }
    if (problem.detail === undefined) problem.detail = problem.title ?? `HTTP ${status}`;
    return problem;
  }
  // Not hookd's problem+json: a proxy in between, or --server pointing at something else.
  if (/^\s*<(?:!doctype|html|head|body|\?xml)/i.test(text)) {
    // A page of markup says nothing useful on a terminal; where it came from does.
    const heading = /<(title|h1)[^>]*>([^<]{1,120})</i.exec(text)?.[2]?.replace(/\s+/g, ' ').trim();
    return {
      status,
      html: true,
      detail:
        `${path}: HTTP ${status} ${STATUS_CODES[status] ?? ''}, an HTML page${heading ? ` ("${heading}")` : ''}, not hookd's API`.replace(
          ' ,',
          ',',
        ),
    };
  }
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  return {
    status,
    detail: `${path}: HTTP ${status} ${STATUS_CODES[status] ?? ''}`.trim() + (snippet ? `: ${snippet}` : ''),
  };
}

/** Maps a failure to connect or to read an answer onto exit 3, naming the server and the reason. */
export function transportError(server: string, e: unknown): Error {
  const code = networkCode(e);
  if (server.startsWith('https:') && plainHttpAnswer(code, e)) {
    // OpenSSL's "wrong version number": the other end answered TLS's hello in plain HTTP.
    return new UnreachableError(
      server,
      'it answers plain HTTP, not HTTPS (TLS)',
      e,
      `use ${server.replace(/^https:/, 'http:')} (--server or HOOKD_URL), or put a TLS-terminating proxy in front of hookd`,
    );
  }
  if (
    code !== undefined &&
    (NETWORK_CODES.has(code) || code.startsWith('ERR_TLS') || code.includes('CERT'))
  ) {
    return new UnreachableError(server, describeNetworkError(code, e), e);
  }
  return new UnreachableError(server, (e as Error)?.message ?? String(e), e);
}

/** Turns an error answer (status + body text) into the error hookctl reports: 401 → exit 4, else exit 1. */
export function errorFromResponse(
  status: number,
  contentType: string,
  text: string,
  path: string,
  tokenSource: string,
): Error {
  let parsed: unknown;
  if (/json/i.test(contentType) || /^\s*\{/.test(text)) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  const problem = toProblem(status, parsed, text, path);
  if (status === 401) {
    return new AuthError(
      `${problem.detail ?? 'authentication failed'} (token from ${tokenSource})`,
      'log in again with: hookctl login (it reads the token from standard input), or set HOOKD_TOKEN; an admin can create a token with: hookd token create USER',
    );
  }
  return new ApiError(status, problem, hintFor(problem, path));
}

function plainHttpAnswer(code: string | undefined, e: unknown): boolean {
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_HTTP_REQUEST') return true;
  const message = String((e as Error)?.message ?? '');
  return /wrong version number|http request|packet length too long/i.test(message);
}

function networkCode(e: unknown): string | undefined {
  const err = e as { code?: unknown; cause?: { code?: unknown }; errors?: { code?: unknown }[] };
  const code = err?.code ?? err?.cause?.code ?? err?.errors?.[0]?.code;
  return typeof code === 'string' ? code : undefined;
}

function describeNetworkError(code: string, e: unknown): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return 'timed out while connecting';
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'timed out waiting for the answer';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return 'the connection was closed unexpectedly';
    default:
      return `${(e as Error).message ?? code} (${code})`;
  }
}
