/**
 * The hooks a proxied request fires: BeforeCompletion on arrival, before the request is
 * forwarded and without waiting for any callback; AfterCompletion when the whole response is
 * known, its end held until the callbacks they fired are recorded.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { MatchEngine } from '../engine/index.js';
import { BodyRecorder, DEFAULT_FILTER_BODY_LIMIT, filterHeaders } from '../filter/index.js';
import type { LoopVerdict } from '../loops/index.js';
import type { TraceRef } from '../tracing/index.js';
import type { AfterCompletion } from './proxy-exchange.js';

export interface FiringOptions {
  engine: MatchEngine;
  uriOf: (req: IncomingMessage, socket?: Socket) => string;
  log: Logger;
  /** Resolves once the callbacks fired so far are recorded; left out, nothing waits. */
  recorded?: (() => Promise<void>) | undefined;
  /** The lazy resolver of a request's user (an identity provider); asked only when a hook matched. */
  requestUser?: ((req: IncomingMessage) => () => Promise<string | undefined>) | undefined;
  /** The identity header (lower case): never shown to a filter, like the credentials. */
  guardedHeader?: string | undefined;
  /** How much of a body is kept for the hooks that read it (`--filter-body-limit`). */
  filterBodyLimit?: number | undefined;
}

/** What a request fired so far, for its debug line, and how it fires its AfterCompletion hooks. */
export interface Fired {
  path: string;
  count: number;
  after: AfterCompletion | undefined;
  /**
   * Set when a hook matching the request reads its body: what to forward instead of the request
   * stream, the same chunks as they arrive (a copy is kept on the way).
   */
  body?: Readable;
  /** Set when an AfterCompletion hook matching the request reads the response body. */
  responseCopy?: BodyRecorder;
}

export class ProxyFiring {
  constructor(private readonly opts: FiringOptions) {}

  /**
   * Fires the request's BeforeCompletion hooks now and prepares its AfterCompletion ones;
   * undefined when no hook watches either phase (the hot path then allocates nothing here).
   */
  arrive(
    req: IncomingMessage,
    method: string,
    url: string,
    loop: LoopVerdict | undefined,
    trace: TraceRef | undefined,
  ): Fired | undefined {
    const { engine, log } = this.opts;
    const before = engine.watches('before');
    const afterToo = engine.watches('after');
    if (!before && !afterToo) return undefined;
    const path = pathOf(url);
    const user = this.opts.requestUser?.(req);
    const fired: Fired = { path, count: 0, after: undefined };
    const hidden = this.opts.guardedHeader === undefined ? [] : [this.opts.guardedHeader];
    const headers = () => filterHeaders(req.rawHeaders, hidden);
    // Null unless a hook matching this request reads a body: then, and only then, copies are kept.
    const needs = engine.code.bodyNeeds(method, path);
    const limit = this.opts.filterBodyLimit ?? DEFAULT_FILTER_BODY_LIMIT;
    const requestCopy = needs && (needs.before || needs.after.request) ? new BodyRecorder(limit) : undefined;
    if (needs?.after.response) fired.responseCopy = new BodyRecorder(limit);
    if (requestCopy !== undefined) {
      fired.body = Readable.from(
        tee(req, requestCopy, () => {
          if (!needs?.before) return;
          try {
            fired.count += engine.fire('before', {
              method,
              path,
              uri: () => this.opts.uriOf(req),
              requestUser: user,
              trace,
              loop: loop?.trail,
              headers,
              requestBody: requestCopy.copy,
              bodyReaders: 'only',
            });
          } catch (err) {
            log.error({ err, path }, 'firing BeforeCompletion hooks failed');
          }
        }),
        { objectMode: false },
      );
    }
    if (before) {
      try {
        fired.count = engine.fire('before', {
          method,
          path,
          uri: () => this.opts.uriOf(req),
          requestUser: user,
          trace,
          loop: loop?.trail,
          headers,
          ...(needs?.before && { bodyReaders: 'skip' as const }),
        });
      } catch (err) {
        // A hook must never take the proxied request down with it.
        log.error({ err, path }, 'firing BeforeCompletion hooks failed');
      }
    }
    if (!afterToo) return fired;
    // Captured now: by the end undici may have destroyed the request stream, which nulls req.socket.
    const socket = req.socket;
    // Fired when the whole response is known, before its end goes to the client: the end waits
    // until the fired callbacks are recorded (docs/DECISIONS.md "AfterCompletion: recorded
    // before the response ends"), so a client that has its response can rely on them.
    fired.after = (statusCode, responseHeaders) => {
      let n = 0;
      try {
        n = engine.fire('after', {
          method,
          path,
          uri: () => this.opts.uriOf(req, socket),
          statusCode,
          requestUser: user,
          trace,
          loop: loop?.trail,
          headers,
          ...(requestCopy !== undefined && { requestBody: requestCopy.copy }),
          response: {
            headers: () => filterHeaders(responseHeaders ?? []),
            ...(fired.responseCopy !== undefined && { body: fired.responseCopy.copy }),
          },
        });
      } catch (err) {
        log.error({ err, path }, 'firing AfterCompletion hooks failed');
      }
      fired.count += n;
      const recorded = this.opts.recorded;
      if (n === 0 || !recorded) return undefined;
      // Transformed callbacks reach the pipeline once their transform has run: waited for first.
      const handed = (): Promise<void> => engine.settled().then(recorded);
      // With a provider the callbacks are recorded once the user is known (the engine asked for
      // it; the answer is shared and settles first for the engine, which registered first): the
      // end waits for that too, so the guarantee holds with a provider as without.
      return user ? user().then(handed) : handed();
    };
    return fired;
  }

  /**
   * An Upgrade request: BeforeCompletion hooks now; the AfterCompletion firing for when the
   * upstream answered (its 101, or the answer relayed instead), if any hook watches.
   */
  upgrade(
    req: IncomingMessage,
    url: string,
    loop: LoopVerdict | undefined,
  ): ((status: number) => void) | undefined {
    const engine = this.opts.engine;
    const trigger = {
      method: req.method ?? 'GET',
      path: pathOf(url),
      uri: () => this.opts.uriOf(req),
      requestUser: this.opts.requestUser?.(req),
      loop: loop?.trail,
    };
    if (engine.watches('before')) engine.fire('before', trigger);
    return engine.watches('after')
      ? (statusCode: number) => void engine.fire('after', { ...trigger, statusCode })
      : undefined;
  }
}

export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * The request body as it arrives, chunk for chunk, keeping a copy on the way; `ended` once it
 * is complete. Undici pulls the next chunk only when the upstream socket takes it, so the
 * backpressure is the stream's own.
 */
async function* tee(req: IncomingMessage, copy: BodyRecorder, ended: () => void): AsyncGenerator<Buffer> {
  for await (const chunk of req) {
    copy.add(chunk as Buffer);
    yield chunk as Buffer;
  }
  copy.end();
  ended();
}
