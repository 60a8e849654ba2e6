import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { HookdError } from '../errors/index.js';
import { toProblem } from '../http-api/index.js';
import { printable } from '../util/index.js';

/** What Node's HTTP parser hands a server's 'clientError' listener. */
interface ParserError extends Error {
  code?: string;
  reason?: string;
  rawPacket?: Buffer;
}

/** The request line of what arrived (latin1: one character per byte), for the answer and the log. */
function requestLine(raw: Buffer | undefined): string {
  if (raw === undefined) return '';
  const text = raw.toString('latin1');
  const end = text.search(/\r?\n/);
  return end === -1 ? text : text.slice(0, end);
}

/** `é` in a request target as the client should have sent it: %C3%A9. */
function percentEncoded(rawTarget: string): string {
  return Array.from(Buffer.from(rawTarget, 'latin1'))
    .map((b) =>
      b > 0x7e || b < 0x21 ? `%${b.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(b),
    )
    .join('');
}

/** The problem a request Node's parser refused gets, and why in words. */
export function clientErrorProblem(err: ParserError): { status: number; body: string; detail: string } {
  const line = requestLine(err.rawPacket);
  const target = line.split(' ')[1] ?? '';
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    const detail = 'the request headers are larger than the limit (16 KiB in all)';
    return { status: 431, detail, body: problem(431, 'Request header fields too large', detail) };
  }
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    const detail = 'the request did not arrive in whole within the time allowed';
    return { status: 408, detail, body: problem(408, 'Request timeout', detail) };
  }
  // Raw bytes above ASCII (UTF-8 typed into a URL) in the path or the query: Node's parser takes
  // only what RFC 9112 allows there. The client is told the spelling that works.
  const detail =
    err.code === 'HPE_INVALID_URL' && /[\u0080-\u00ff]/.test(target)
      ? `the request target holds bytes outside ASCII (raw UTF-8?), which HTTP/1.1 does not allow in a URL: percent-encode them, e.g. ${printable(percentEncoded(target))}`
      : `the request is malformed: ${err.reason ?? err.message} (${err.code ?? 'parse error'})`;
  const body = JSON.stringify(toProblem(new HookdError('BAD_REQUEST', detail)));
  return { status: 400, detail, body };
}

function problem(status: number, title: string, detail: string): string {
  const slug = title.toLowerCase().replace(/ /g, '-');
  return JSON.stringify({ type: `urn:hookd:problem:${slug}`, title, status, detail });
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * A server's answer to a request its HTTP parser refused (Fastify's `clientErrorHandler`, a Node
 * server's 'clientError'): a problem document saying why, and a log line, rather than a bare 400.
 */
export function clientErrorAnswer(log: Logger): (err: Error, socket: Duplex) => void {
  return (err: ParserError, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const { status, body, detail } = clientErrorProblem(err);
    const peer = (socket as { remoteAddress?: string }).remoteAddress;
    log.info(
      {
        peer,
        err: `${err.code ?? 'parse error'}: ${err.reason ?? err.message}`,
        status,
        requestLine: printable(requestLine(err.rawPacket)),
      },
      `request refused: ${detail}`,
    );
    if (socket.writable) {
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    } else socket.destroy();
  };
}
