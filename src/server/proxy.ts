import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { Pool } from 'undici';
import { HeaderHygiene, setsOwnCookie, UpgradeGate } from '../edge/index.js';
import type { MatchEngine } from '../engine/match-engine.js';
import { HookdError } from '../errors/catalog.js';
import { toProblem } from '../http-api/index.js';
import { CDN_ID, type LoopGuard, refuseLoop, refuseLoopUpgrade } from '../loops/index.js';
import type { Tracing } from '../tracing/types.js';

export interface ProxyOptions {
  upstream: string;
  timeoutMs: number;
  engine: MatchEngine;
  uriOf: (req: IncomingMessage, socket?: Socket) => string;
  /** Whose X-Forwarded-* headers are kept (read per request, so a reload takes effect at once). */
  trusted: { readonly empty: boolean; trusts(address: string | undefined): boolean };
  log: Logger;
  /** Keep-alive connections to the upstream (default 128). */
  connections?: number;
  /** Told the status of every proxied response, hookd's own 502/504 included (metrics). */
  onStatus?: (status: number) => void;
  /** True once hookd is shutting down: responses then close their connection. */
  closing?: () => boolean;
  /**
   * Resolves once the callbacks fired so far are recorded (the delivery pipeline's `settled`):
   * the end of a response whose AfterCompletion hooks fired waits for it. Left out, nothing waits.
   */
  recorded?: () => Promise<void>;
  /**
   * With an identity provider: makes the lazy resolver of a request's user (`Trigger.requestUser`).
   * Called only for requests that some hook watches; the provider is asked only if one matched.
   */
  requestUser?: (req: IncomingMessage) => () => Promise<string | undefined>;
  /**
   * A header only trusted proxies may send (`--identity-header`, lower case): dropped from the
   * requests of every other peer before they are forwarded.
   */
  guardedHeader?: string;
  /** OpenTelemetry (src/tracing/): a span per proxied request; absent while tracing is off. */
  tracing?: Tracing;
  /** Issue 22 (src/loops/): hookd's own requests fire nothing; too many passes are refused. */
  loops?: LoopGuard;
}

/** Fires a request's AfterCompletion hooks; a promise when the end of its response must wait for it. */
type AfterCompletion = (statusCode: number) => Promise<void> | undefined;

// RFC 9110 §7.6.1: meaningful for one connection only, never forwarded.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
  // Node answers 100-continue itself; undici refuses to send the header.
  'expect',
]);

const FORWARDED = new Set(['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']);

/**
 * The reverse proxy: everything outside the API goes to the upstream, bodies streamed both ways
 * with manual backpressure (PERF-NOTES: `pipeline()` doubled the CPU per request), through one
 * keep-alive pool. BeforeCompletion hooks fire on arrival, before the request is forwarded and
 * without waiting for any callback; AfterCompletion hooks when the whole response is known,
 * including a 502/504 that hookd produced itself, and the end of that response reaches the client
 * only once the callbacks they fired are recorded (`recorded`).
 */
export class ReverseProxy {
  private readonly pool: Pool;
  private readonly origin: URL;
  private readonly prefix: string;
  // Issue 22 (src/edge/): header hygiene for untrusted peers; upgrades tunnel only after a 101.
  private readonly hygiene: HeaderHygiene;
  private readonly upgrades: UpgradeGate;

  /** Whether debug lines are written; follows the logger's level (a reload may change it). */
  private debug: boolean;

  constructor(private readonly opts: ProxyOptions) {
    this.debug = opts.log.isLevelEnabled('debug');
    opts.log.on('level-change', () => {
      this.debug = opts.log.isLevelEnabled('debug');
    });
    this.origin = new URL(opts.upstream);
    this.prefix = this.origin.pathname.replace(/\/+$/, '');
    this.hygiene = new HeaderHygiene(opts.guardedHeader);
    this.upgrades = new UpgradeGate({
      origin: this.origin,
      prefix: this.prefix,
      timeoutMs: opts.timeoutMs,
      log: opts.log,
    });
    this.pool = new Pool(this.origin.origin, {
      connections: opts.connections ?? 128,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    const engine = this.opts.engine;
    // Tracing off: this one check is all it costs (no span objects).
    // Issue 22 (src/loops/): hookd's own requests fire no hooks; one gone round too often: 508.
    const loop = this.opts.loops?.inspect(method, url, req.rawHeaders);
    if (loop?.refuse) {
      refuseLoop(res);
      return;
    }
    const hooks = loop?.own === undefined;
    const span = this.opts.tracing === undefined ? undefined : this.opts.tracing.request(req);
    let path: string | undefined;
    let fired = 0;
    let requestUser: (() => Promise<string | undefined>) | undefined;
    if (hooks && engine.watches('before')) {
      path = pathOf(url);
      requestUser = this.opts.requestUser?.(req);
      try {
        fired = engine.fire('before', {
          method,
          path,
          uri: () => this.opts.uriOf(req),
          requestUser,
          trace: span?.ref,
          loop: loop?.trail,
        });
      } catch (err) {
        // A hook must never take the proxied request down with it.
        this.opts.log.error({ err, path }, 'firing BeforeCompletion hooks failed');
      }
    }
    let after: AfterCompletion | undefined;
    if (hooks && engine.watches('after')) {
      const p = path ?? pathOf(url);
      // Captured now: by the end undici may have destroyed the request stream, which nulls req.socket.
      const socket = req.socket;
      const user = requestUser ?? this.opts.requestUser?.(req);
      // Fired when the whole response is known, before its end goes to the client: the end waits
      // until the fired callbacks are recorded (docs/DECISIONS.md "AfterCompletion: recorded
      // before the response ends"), so a client that has its response can rely on them.
      after = (statusCode) => {
        let n = 0;
        try {
          n = engine.fire('after', {
            method,
            path: p,
            uri: () => this.opts.uriOf(req, socket),
            statusCode,
            requestUser: user,
            trace: span?.ref,
            loop: loop?.trail,
          });
        } catch (err) {
          this.opts.log.error({ err, path: p }, 'firing AfterCompletion hooks failed');
        }
        fired += n;
        const recorded = this.opts.recorded;
        if (n === 0 || !recorded) return undefined;
        // With a provider the callbacks are recorded once the user is known (the engine asked for
        // it; the answer is shared and settles first for the engine, which registered first): the
        // end waits for that too, so the guarantee holds with a provider as without.
        return user ? user().then(recorded) : recorded();
      };
    }
    // The per-request debug line costs one boolean test when debug is off.
    if (this.debug) {
      const p = path ?? pathOf(url);
      const started = performance.now();
      res.on('finish', () => {
        const durationMs = Math.round((performance.now() - started) * 10) / 10;
        this.opts.log.debug(
          { method, path: p, status: res.statusCode, durationMs, hooks: fired },
          'proxied request',
        );
      });
    }

    const forward = this.forwardHeaders(req);
    forward.headers.push('cdn-loop', CDN_ID); // issue 22: RFC 8586, counted by src/loops/
    if (span !== undefined) {
      // Ends with the response; the AfterCompletion fire spans start before, inside it.
      res.on('close', () => span.end(res.statusCode));
      setTraceParent(forward.headers, span.traceparent);
    }
    this.pool.dispatch(
      {
        path: this.prefix + url,
        method: method as Dispatcher.HttpMethod,
        headers: forward.headers,
        body: forward.hasBody ? req : null,
      },
      new Exchange(req, res, this.failed, this.opts.onStatus, this.opts.closing, after),
    );
  };

  private readonly failed = (
    req: IncomingMessage,
    res: ServerResponse,
    err: Error,
    after: AfterCompletion | undefined,
  ): void => this.fail(req, res, err, after);

  /**
   * WebSocket and other Upgrade requests: forwarded with the same header treatment as plain ones;
   * a raw byte tunnel only once the upstream answers 101 (src/edge/upgrade-gate.ts, issue 22).
   */
  readonly handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer, server: Server): void => {
    // h2c, or a body: served as plain HTTP/1.1 by the server's own request path instead.
    if (this.upgrades.downgrade(req, socket, head, server)) return;
    const url = req.url ?? '/';
    const loop = this.opts.loops?.inspect(req.method ?? 'GET', url, req.rawHeaders);
    if (loop?.refuse) {
      refuseLoopUpgrade(socket);
      return;
    }
    const engine = this.opts.engine;
    const hooks = loop?.own === undefined;
    const trigger = {
      method: req.method ?? 'GET',
      path: pathOf(url),
      uri: () => this.opts.uriOf(req),
      requestUser: this.opts.requestUser?.(req),
      loop: loop?.trail,
    };
    if (hooks && engine.watches('before')) engine.fire('before', trigger);
    // AfterCompletion hooks: when the upstream answered (its 101, or the answer relayed instead).
    const answer =
      hooks && engine.watches('after')
        ? (statusCode: number) => void engine.fire('after', { ...trigger, statusCode })
        : undefined;
    const trusted = this.trustedPeer(req);
    const headers: string[] = [];
    const seen: SeenHeaders = {
      connection: undefined,
      host: req.headers.host ?? '',
      xff: undefined,
      proto: undefined,
      xfh: undefined,
    };
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      if (FORWARDED.has(name)) rememberForwarded(seen, name, raw[i + 1]!);
      else if (!this.hygiene.drops(name, trusted)) headers.push(raw[i]!, raw[i + 1]!);
    }
    this.pushForwarded(req, seen, headers, trusted);
    headers.push('cdn-loop', CDN_ID);
    this.upgrades.forward(req, socket, head, headers, server, answer);
  };

  /** Ends every open tunnel (the drain deadline has passed); see UpgradeGate.closeTunnels. */
  closeTunnels(): void {
    this.upgrades.closeTunnels();
  }

  async close(): Promise<void> {
    this.closeTunnels();
    await this.pool.close();
  }

  /** Whether the peer is a trusted proxy: asked once per request (it parses the address). */
  private trustedPeer(req: IncomingMessage): boolean {
    return !this.opts.trusted.empty && this.opts.trusted.trusts(req.socket.remoteAddress ?? '');
  }

  /**
   * The request's headers as forwarded: hop-by-hop ones and those its Connection header lists
   * dropped, X-Forwarded-* set. One pass over `rawHeaders`: reading `req.headers` would make Node
   * build the header object, which nothing else on the proxied path needs (profile, issue 7).
   */
  private forwardHeaders(req: IncomingMessage): { headers: string[]; hasBody: boolean } {
    const raw = req.rawHeaders;
    const out: string[] = [];
    const seen: SeenHeaders = {
      connection: undefined,
      host: '',
      xff: undefined,
      proto: undefined,
      xfh: undefined,
    };
    let hasBody = false;
    const trusted = this.trustedPeer(req);
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      const value = raw[i + 1]!;
      // Issue 22 (src/edge/): the identity header in every spelling, Forwarded, X-Real-IP.
      if (this.hygiene.drops(name, trusted)) continue;
      if (HOP_BY_HOP.has(name)) {
        if (name === 'connection') seen.connection = seen.connection ? `${seen.connection}, ${value}` : value;
        else if (name === 'transfer-encoding') hasBody = true;
        continue;
      }
      if (FORWARDED.has(name)) {
        rememberForwarded(seen, name, value);
        continue;
      }
      if (name === 'content-length') hasBody ||= value !== '0';
      else if (name === 'host' && seen.host === '') seen.host = value;
      out.push(raw[i]!, value);
    }
    const listed = seen.connection;
    const headers =
      listed && listed !== 'keep-alive' && listed !== 'close' ? withoutListed(out, listed) : out;
    this.pushForwarded(req, seen, headers, trusted);
    return { headers, hasBody };
  }

  /** Appends X-Forwarded-For/-Proto/-Host as name, value pairs. */
  private pushForwarded(req: IncomingMessage, seen: SeenHeaders, out: string[], trusted: boolean): void {
    const peer = req.socket.remoteAddress ?? '';
    const proto = 'encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http';
    out.push(
      'x-forwarded-for',
      trusted && seen.xff ? `${seen.xff}, ${peer}` : peer,
      'x-forwarded-proto',
      (trusted && seen.proto) || proto,
      'x-forwarded-host',
      (trusted && seen.xfh) || seen.host,
    );
  }

  private fail(req: IncomingMessage, res: ServerResponse, err: Error, after?: AfterCompletion): void {
    const code = (err as { code?: string }).code ?? '';
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (req.destroyed && code !== 'UND_ERR_HEADERS_TIMEOUT') {
      // The client went away first (its upload broke the forwarded request): nobody to answer.
      res.destroy();
      return;
    }
    const timeout =
      code === 'UND_ERR_HEADERS_TIMEOUT' ||
      code === 'UND_ERR_BODY_TIMEOUT' ||
      code === 'UND_ERR_CONNECT_TIMEOUT';
    // The client learns what happened, never where: the upstream's address is for the log only.
    const problem = timeout
      ? new HookdError(
          'GATEWAY_TIMEOUT',
          `the upstream service did not answer within ${this.opts.timeoutMs} ms`,
        )
      : new HookdError('BAD_GATEWAY', 'the upstream service cannot be reached; the log of hookd has details');
    this.opts.log.warn(
      {
        method: req.method,
        path: pathOf(req.url ?? '/'),
        upstream: this.origin.origin,
        err: code || err.message,
      },
      problem.title,
    );
    const body = JSON.stringify(toProblem(problem));
    res.writeHead(problem.status, {
      'content-type': 'application/problem+json',
      'content-length': Buffer.byteLength(body),
    });
    this.opts.onStatus?.(problem.status);
    // hookd's own 502/504 fires AfterCompletion hooks too, and waits for them like any answer.
    const wait = after?.(problem.status);
    if (wait === undefined) res.end(body);
    else void wait.then(() => res.end(body));
  }
}

/** What the forwarding rules need to know of a request's headers. */
interface SeenHeaders {
  connection: string | undefined;
  host: string;
  xff: string | undefined;
  proto: string | undefined;
  xfh: string | undefined;
}

/** Keeps an incoming X-Forwarded-* value (used only when the peer is trusted); repeats join as Node does. */
function rememberForwarded(seen: SeenHeaders, name: string, value: string): void {
  if (name === 'x-forwarded-for') seen.xff = seen.xff ? `${seen.xff}, ${value}` : value;
  else if (name === 'x-forwarded-proto') seen.proto ??= value;
  else if (name === 'x-forwarded-host') seen.xfh ??= value;
}

/** The name/value list without the headers a Connection header lists (RFC 9110 §7.6.1). */
function withoutListed(list: string[], connection: string): string[] {
  const listed = new Set(connection.toLowerCase().split(/\s*,\s*/));
  const kept: string[] = [];
  for (let i = 0; i < list.length; i += 2) {
    if (!listed.has(list[i]!.toLowerCase())) kept.push(list[i]!, list[i + 1]!);
  }
  return kept;
}

/** The upstream continues the proxy span's trace: its `traceparent` replaces the client's. */
function setTraceParent(list: string[], value: string): void {
  for (let i = 0; i < list.length; i += 2) {
    if (list[i]!.length === 11 && list[i]!.toLowerCase() === 'traceparent') {
      list[i + 1] = value;
      return;
    }
  }
  list.push('traceparent', value);
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

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
    if (lower === 'set-cookie' && setsOwnCookie(value)) continue; // issue 22: hookd's own cookies
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
class Exchange implements Dispatcher.DispatchHandler {
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

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly failed: (
      req: IncomingMessage,
      res: ServerResponse,
      err: Error,
      after: AfterCompletion | undefined,
    ) => void,
    private readonly onStatus: ((status: number) => void) | undefined,
    private readonly closing: (() => boolean) | undefined,
    private readonly after: AfterCompletion | undefined,
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
    if (this.after !== undefined) this.remaining = contentLength(headers);
    // Draining: this answer ends its keep-alive connection, so the client reconnects elsewhere.
    if (this.closing?.()) headers.push('connection', 'close');
    this.res.writeHead(statusCode, headers);
    this.onStatus?.(statusCode);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
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
    // A client that went away gets nothing, and fires nothing (as before: no completed response).
    const wait = this.after !== undefined && !this.res.destroyed ? this.after(this.statusCode) : undefined;
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
