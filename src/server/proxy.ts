import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { Pool } from 'undici';
import { HeaderHygiene, UpgradeGate } from '../edge/index.js';
import type { MatchEngine } from '../engine/index.js';
import { HookdError } from '../errors/index.js';
import { toProblem } from '../http-api/index.js';
import { CDN_ID, type LoopGuard, refuseLoop, refuseLoopUpgrade } from '../loops/index.js';
import type { Tracing } from '../tracing/index.js';
import { type AfterCompletion, Exchange } from './proxy-exchange.js';
import { ProxyFiring, pathOf } from './proxy-firing.js';
import { forwardHeaders, setTraceParent, upgradeHeaders } from './proxy-request-headers.js';

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
  /** The loop guard (src/loops/): hookd's own requests fire nothing; too many passes are refused. */
  loops?: LoopGuard;
  /** How much of a body is kept for the hooks that read it (`--filter-body-limit`; default 64 KiB). */
  filterBodyLimit?: number;
}

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
  // The edge (src/edge/): header hygiene for untrusted peers; upgrades tunnel only after a 101.
  private readonly hygiene: HeaderHygiene;
  private readonly upgrades: UpgradeGate;
  private readonly firing: ProxyFiring;

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
    this.firing = new ProxyFiring(opts);
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
    // hookd's own requests fire no hooks (src/loops/); one gone round too often: 508.
    const loop = this.opts.loops?.inspect(method, url, req.rawHeaders);
    if (loop?.refuse) {
      refuseLoop(res);
      return;
    }
    // Tracing off: this one check is all it costs (no span objects).
    const span = this.opts.tracing === undefined ? undefined : this.opts.tracing.request(req);
    const fired = loop?.own === undefined ? this.firing.arrive(req, method, url, loop, span?.ref) : undefined;
    // The per-request debug line costs one boolean test when debug is off.
    if (this.debug) {
      const p = fired?.path ?? pathOf(url);
      const started = performance.now();
      res.on('finish', () => {
        const durationMs = Math.round((performance.now() - started) * 10) / 10;
        this.opts.log.debug(
          { method, path: p, status: res.statusCode, durationMs, hooks: fired?.count ?? 0 },
          'proxied request',
        );
      });
    }

    const forward = forwardHeaders(req, this.hygiene, this.trustedPeer(req));
    forward.headers.push('cdn-loop', CDN_ID); // RFC 8586, counted by src/loops/
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
        body: forward.hasBody ? (fired?.body ?? req) : null,
      },
      new Exchange(
        req,
        res,
        this.failed,
        this.opts.onStatus,
        this.opts.closing,
        fired?.after,
        fired?.responseCopy,
      ),
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
   * a raw byte tunnel only once the upstream answers 101 (src/edge/upgrade-gate.ts).
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
    // AfterCompletion hooks: when the upstream answered (its 101, or the answer relayed instead).
    const answer = loop?.own === undefined ? this.firing.upgrade(req, url, loop) : undefined;
    const headers = upgradeHeaders(req, this.hygiene, this.trustedPeer(req));
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
