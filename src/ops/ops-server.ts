import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { HookdError } from '../errors/index.js';
import { toProblem } from '../http-api/index.js';
import { closeServer, listenOn } from './listen.js';

/** What the probes ask of the daemon. */
export interface OpsState {
  /** True once a stop signal arrived (readiness turns 503 so load balancers stop sending). */
  draining(): boolean;
  /** Resolves true when the store answers. */
  storeReady(): Promise<boolean>;
  /** The delivery threads running and configured (0 and 0 when the core's loop sends). */
  deliveryThreads(): { running: number; configured: number };
}

export interface OpsSources {
  state: OpsState;
  /** Prometheus text and its content type. */
  metrics: { text(): Promise<string>; readonly contentType: string };
}

/** The paths of the operations listener (docs/API.md "Operations"). */
export const OPS_PATHS = ['/metrics', '/healthz', '/readyz'] as const;

/**
 * The operations listener (`--ops-listen`, loopback by default): Prometheus metrics, liveness and
 * readiness, on a port of their own so that the proxied service's path space stays the service's
 * and nothing an operator needs (callback destinations in metrics among it) is on the public port.
 * A plain Node server: three read-only resources need no router, and no token (bind it where only
 * Prometheus and the health checker reach it).
 */
export class OpsServer {
  private readonly server: Server;
  private boundUrl = '';

  constructor(private readonly sources: OpsSources) {
    this.server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
      this.handle(req, res).catch(() => {
        if (!res.headersSent) send(res, 503, { status: 'error' });
        else res.destroy();
      });
    });
  }

  /** Listens; resolves to the base URL, e.g. `http://127.0.0.1:8471`. */
  async listen(at: { host: string; port: number }): Promise<string> {
    this.boundUrl = await listenOn(this.server, at, {
      what: 'the operations listener (metrics, health)',
      flag: '--ops-listen',
      canTurnOff: true,
    });
    return this.boundUrl;
  }

  url(): string {
    return this.boundUrl;
  }

  async close(): Promise<void> {
    if (!this.server.listening) return;
    const closed = closeServer(this.server);
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = (q === -1 ? url : url.slice(0, q)).replace(/\/+$/, '') || '/';
    if (!(OPS_PATHS as readonly string[]).includes(path)) {
      return problem(
        res,
        new HookdError('NOT_FOUND', `no operations resource at ${path}; try ${OPS_PATHS.join(', ')}`),
      );
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return problem(
        res,
        new HookdError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${path}; allowed: GET, HEAD`),
      );
    }
    if (path === '/healthz') return send(res, 200, { status: 'ok' }, req.method === 'HEAD');
    if (path === '/readyz') {
      const draining = this.sources.state.draining();
      const store = await this.sources.state.storeReady().catch(() => false);
      const ready = !draining && store;
      const { running, configured } = this.sources.state.deliveryThreads();
      return send(
        res,
        ready ? 200 : 503,
        {
          status: ready ? 'ready' : 'not ready',
          draining,
          store,
          deliveryThreads: { running, configured },
        },
        req.method === 'HEAD',
      );
    }
    const text = await this.sources.metrics.text();
    res.writeHead(200, {
      'content-type': this.sources.metrics.contentType,
      'content-length': Buffer.byteLength(text),
    });
    res.end(req.method === 'HEAD' ? undefined : text);
  }
}

function send(res: ServerResponse, status: number, body: unknown, head = false): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(head ? undefined : text);
}

function problem(res: ServerResponse, err: HookdError): void {
  const text = JSON.stringify(toProblem(err));
  res.writeHead(err.status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
