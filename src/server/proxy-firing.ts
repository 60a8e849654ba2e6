/**
 * The hooks a proxied request fires: BeforeCompletion on arrival, before the request is
 * forwarded and without waiting for any callback; AfterCompletion when the whole response is
 * known, its end held until the callbacks they fired are recorded.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { MatchEngine } from '../engine/index.js';
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
}

/** What a request fired so far, for its debug line, and how it fires its AfterCompletion hooks. */
export interface Fired {
  path: string;
  count: number;
  after: AfterCompletion | undefined;
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
    if (before) {
      try {
        fired.count = engine.fire('before', {
          method,
          path,
          uri: () => this.opts.uriOf(req),
          requestUser: user,
          trace,
          loop: loop?.trail,
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
    fired.after = (statusCode) => {
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
        });
      } catch (err) {
        log.error({ err, path }, 'firing AfterCompletion hooks failed');
      }
      fired.count += n;
      const recorded = this.opts.recorded;
      if (n === 0 || !recorded) return undefined;
      // With a provider the callbacks are recorded once the user is known (the engine asked for
      // it; the answer is shared and settles first for the engine, which registered first): the
      // end waits for that too, so the guarantee holds with a provider as without.
      return user ? user().then(recorded) : recorded();
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
