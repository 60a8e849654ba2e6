import { type IncomingMessage, type OutgoingHttpHeaders, request, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { PEER_HEADER, SECRET_HEADER } from './messages.js';

export interface ForwardOptions {
  /** The primary's private base URL (`http://127.0.0.1:PORT`). */
  primary: string;
  secret: string;
  /** `${apiBase}/_hookd/reload`: after a 2xx, every worker reloads too. */
  reloadPath: string;
  /** Resolves once every worker has applied every change the primary knows of. */
  barrier: () => Promise<void>;
  reloadAll: () => void;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
// Meaningful for one connection only: the worker's own connection to the primary is not the client's.
const HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);

/**
 * Passes API requests (and the tail's WebSocket) on to the primary, which owns the API. One fresh
 * connection per request: the primary sets the request's peer address from PEER_HEADER on that
 * connection's socket, which must therefore never carry two clients' requests.
 */
export class ApiForwarder {
  private readonly host: string;
  private readonly port: number;

  constructor(private readonly opts: ForwardOptions) {
    const u = new URL(opts.primary);
    this.host = u.hostname;
    this.port = Number(u.port);
  }

  private headersOf(req: IncomingMessage): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && v !== undefined) headers[k] = v;
    headers[SECRET_HEADER] = this.opts.secret;
    headers[PEER_HEADER] = req.socket.remoteAddress ?? '';
    return headers;
  }

  readonly request = (req: IncomingMessage, res: ServerResponse): void => {
    const method = req.method ?? 'GET';
    const up = request(
      { host: this.host, port: this.port, method, path: req.url, headers: this.headersOf(req), agent: false },
      (answer) => {
        const go = () => {
          const headers: OutgoingHttpHeaders = {};
          for (const [k, v] of Object.entries(answer.headers))
            if (!HOP.has(k) && v !== undefined) headers[k] = v;
          res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
          answer.pipe(res);
        };
        if (SAFE.has(method)) return go();
        const ok = (answer.statusCode ?? 500) < 300;
        if (ok && method === 'POST' && (req.url ?? '').split('?')[0] === this.opts.reloadPath)
          this.opts.reloadAll();
        // A change made through this request is in every worker's index before its client hears of it.
        this.opts.barrier().then(go, go);
      },
    );
    up.on('error', () => {
      if (!res.headersSent) {
        res.writeHead(503, { 'content-type': 'application/problem+json', connection: 'close' });
        res.end(
          JSON.stringify({
            type: 'about:blank',
            title: 'Service Unavailable',
            status: 503,
            detail: 'the hookd primary process is not reachable',
          }),
        );
      } else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  };

  readonly upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const conn = connect(this.port, this.host, () => {
      const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/1.1`];
      const raw = req.rawHeaders;
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const k = raw[i]!.toLowerCase();
        if (k === SECRET_HEADER || k === PEER_HEADER) continue;
        lines.push(`${raw[i]}: ${raw[i + 1]}`);
      }
      lines.push(
        `${SECRET_HEADER}: ${this.opts.secret}`,
        `${PEER_HEADER}: ${req.socket.remoteAddress ?? ''}`,
      );
      conn.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) conn.write(head);
      socket.pipe(conn).pipe(socket);
    });
    const drop = () => {
      conn.destroy();
      socket.destroy();
    };
    conn.on('error', drop);
    socket.on('error', drop);
    conn.on('close', () => socket.destroy());
    socket.on('close', () => conn.destroy());
  };
}
