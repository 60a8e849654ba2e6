/**
 * The upstream exchange of one proxied request: undici's dispatch handler that writes the
 * upstream's response into the client's, with its headers cleaned and its end held for the
 * AfterCompletion callbacks.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { setsOwnCookie } from '../edge/index.js';
import type { BodyRecorder } from '../filter/index.js';
import { HOP_BY_HOP, withoutListed } from './proxy-request-headers.js';

/** Fires a request's AfterCompletion hooks; a promise when the end of its response must wait for it. */
export type AfterCompletion = (statusCode: number, headers?: readonly string[]) => Promise<void> | undefined;

/** Answers a request whose upstream exchange failed (502/504, src/server/proxy.ts). */
export type ExchangeFailed = (
  req: IncomingMessage,
  res: ServerResponse,
  err: Error,
  after: AfterCompletion | undefined,
) => void;

/** The Content-Length of a flat name/value header list, or -1 when absent or not one number. */
function contentLength(headers: string[]): number {
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.length === 14 && headers[i]!.toLowerCase() === 'content-length') {
      const n = Number(headers[i + 1]);
      return Number.isSafeInteger(n) && n >= 0 ? n : -1;
    }
  }
  return -1;
}

function latin1(v: Buffer | string): string {
  return typeof v === 'string' ? v : v.toString('latin1');
}

/**
 * The upstream's raw response headers as the flat name/value list `writeHead` takes, names as
 * the upstream spelled them, minus hop-by-hop ones and any that its Connection header lists.
 */
function responseHeaders(raw: ReadonlyArray<Buffer | string>): string[] {
  const out: string[] = [];
  let connection: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = latin1(raw[i]!);
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower)) {
      if (lower === 'connection') connection = latin1(raw[i + 1]!);
      continue;
    }
    const value = latin1(raw[i + 1]!);
    if (lower === 'set-cookie' && setsOwnCookie(value)) continue; // hookd's own cookies stay hookd's
    out.push(name, value);
  }
  if (connection === undefined || connection === 'keep-alive' || connection === 'close') return out;
  return withoutListed(out, connection);
}

/**
 * One proxied request as an undici dispatch handler (undici 8's controller interface): the
 * upstream's response goes straight into the client's. `Pool.request()` would wrap it in a
 * Readable and run the callback in an async scope first; the profile showed that glue on every
 * request. Backpressure: a full client socket pauses the controller until the client drains.
 */
export class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private statusCode = 0;
  /**
   * With AfterCompletion hooks watching: body bytes still to come when the upstream said its
   * Content-Length (the final chunk is then held back, since it alone tells the client that the
   * response is complete); -1 otherwise (the end of a chunked response is `res.end()` itself).
   */
  private remaining = -1;
  private last: Buffer | undefined;
  /** The upstream exchange ended (complete or failed): a later client 'close' is not an abort. */
  private settled = false;
  /** The client went away before undici connected the request: abort it as soon as it does. */
  private abandoned = false;
  /** The response headers as sent, for AfterCompletion filters. */
  private headers: string[] | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly failed: ExchangeFailed,
    private readonly onStatus: ((status: number) => void) | undefined,
    private readonly closing: (() => boolean) | undefined,
    private readonly after: AfterCompletion | undefined,
    /** Set when a hook reads the response body: the copy kept of it. */
    private readonly copy?: BodyRecorder,
  ) {
    res.on('close', () => {
      if (this.settled || res.writableFinished) return;
      if (this.controller) this.controller.abort(new Error('the client closed the connection'));
      else this.abandoned = true;
    });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abandoned) controller.abort(new Error('the client closed the connection'));
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    parsed: Record<string, string | string[] | undefined>,
  ): void {
    // 1xx interim responses are the upstream connection's business; Node sends its own 100.
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    // The raw list keeps the upstream's spelling and order; undici's parsed object is the fallback.
    const raw = controller.rawHeaders;
    const headers = responseHeaders(Array.isArray(raw) ? raw : flatten(parsed));
    if (this.after !== undefined) {
      this.remaining = contentLength(headers);
      this.headers = headers;
    }
    // Draining: this answer ends its keep-alive connection, so the client reconnects elsewhere.
    if (this.closing?.()) headers.push('connection', 'close');
    this.res.writeHead(statusCode, headers);
    this.onStatus?.(statusCode);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.copy?.add(chunk);
    if (this.remaining >= 0) {
      this.remaining -= chunk.length;
      if (this.remaining <= 0) {
        // The final bytes: they go with the end, once the AfterCompletion callbacks are recorded.
        this.last = chunk;
        return;
      }
    }
    if (this.res.write(chunk)) return;
    controller.pause();
    this.res.once('drain', this.resume);
  }

  onResponseEnd(): void {
    this.settled = true;
    // A client that went away gets nothing, and fires nothing: a response never completed is no trigger.
    this.copy?.end();
    const wait =
      this.after !== undefined && !this.res.destroyed ? this.after(this.statusCode, this.headers) : undefined;
    if (wait === undefined) this.end();
    else void wait.then(this.end);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.settled = true;
    this.failed(this.req, this.res, err, this.res.headersSent ? undefined : this.after);
  }

  private readonly resume = (): void => {
    this.controller?.resume();
  };

  private readonly end = (): void => {
    const last = this.last;
    this.last = undefined;
    if (last === undefined) this.res.end();
    else this.res.end(last);
  };
}

/** A parsed header object as a flat name/value list (only when undici gave no raw list). */
function flatten(parsed: Record<string, string | string[] | undefined>): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(parsed)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.push(name, v);
    else out.push(name, value);
  }
  return out;
}
