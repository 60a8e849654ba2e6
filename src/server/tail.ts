import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Principal } from '../auth/index.js';
import { HookdError } from '../errors/index.js';
import { toProblem } from '../http-api/index.js';
import { type IdentityRequest, identityRequestOf } from '../identity/index.js';
import { onDemand } from '../util/index.js';

const wsLibrary = onDemand<typeof import('ws')>('ws');

/** One tail message (docs/API.md "Live tail"); `owner` is used for filtering and never sent. */
export interface TailEvent {
  kind: 'fired' | 'attempt';
  owner: string;
  HookId: string;
  StatusCode?: number | null;
  Outcome?: 'succeeded' | 'retrying' | 'failed';
  [field: string]: unknown;
}

/**
 * Where tail events come from: the delivery pipeline's in-process event stream, and in a cluster
 * the other instances' too. `owner` says whose events the subscriber shows, so that a cluster
 * only carries those someone watches.
 */
export interface TailSource {
  subscribe(listener: (event: TailEvent) => void, filter?: { owner: string }): () => void;
}

export interface TailOptions {
  /** The API's authentication (ApiIdentity): throws a catalog error when the caller is not let in. */
  auth: { authenticate(req: IdentityRequest): Promise<Principal> };
  source: TailSource;
  eventsEnabled: () => boolean;
  log: Logger;
  /** Bytes a client may have unsent before events are dropped for it (default 1 MiB). */
  maxBufferedBytes?: number;
  heartbeatMs?: number;
}

type StatusFilter = '2xx' | '3xx' | '4xx' | '5xx' | 'failed';

/**
 * The live tail: a WebSocket per client streaming the caller's fired callbacks and attempts.
 * A slow client never slows delivery: each client has a bounded send buffer; past it, events are
 * skipped for that client and counted, and a `dropped` notice goes out once it has drained.
 */
export class TailServer {
  /** Made at the first upgrade: a daemon nobody tails never loads the WebSocket library. */
  private server: WebSocketServer | undefined;
  private readonly heartbeat: NodeJS.Timeout;
  /**
   * Session checks by path (the web console's, the portal's): a browser cannot send an
   * Authorization header on an upgrade, so each signs in by its own cookie on its own path.
   */
  private readonly sessionAuth = new Map<string, (req: IncomingMessage) => Promise<Principal | undefined>>();

  constructor(private readonly opts: TailOptions) {
    this.heartbeat = setInterval(() => {
      for (const ws of this.server?.clients ?? []) {
        const state = ws as WebSocket & { alive?: boolean };
        if (state.alive === false) {
          ws.terminate();
          continue;
        }
        state.alive = false;
        ws.ping();
      }
    }, opts.heartbeatMs ?? 15_000);
    this.heartbeat.unref();
  }

  /**
   * Lets upgrades to `path` (a suffix, by default the console's `/_hookd/console/tail`) sign in by
   * a session cookie, which `fn` checks.
   */
  acceptSessions(
    fn: (req: IncomingMessage) => Promise<Principal | undefined>,
    path = '/_hookd/console/tail',
  ): void {
    this.sessionAuth.set(path, fn);
  }

  private wss(): WebSocketServer {
    this.server ??= new (wsLibrary().WebSocketServer)({ noServer: true, maxPayload: 4096 });
    return this.server;
  }

  get clients(): number {
    return this.server?.clients.size ?? 0;
  }

  readonly handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    this.upgrade(req, socket, head).catch((err: unknown) => {
      this.opts.log.warn({ err }, 'tail upgrade failed');
      socket.destroy();
    });
  };

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    // The web console's tail (`/_hookd/console/tail`) signs in by its session cookie, scoped to
    // the console's path; the API's tail by the Authorization header.
    const viaConsole = [...this.sessionAuth].find(([path]) => url.pathname.endsWith(path))?.[1];
    if (!url.pathname.endsWith('/_hookd/tail') && !viaConsole)
      return refuse(socket, new HookdError('NOT_FOUND', `no WebSocket endpoint at ${url.pathname}`));
    if (!this.opts.eventsEnabled()) {
      return refuse(
        socket,
        new HookdError('EVENTS_DISABLED', 'events are disabled on this hookd; start it without --no-events'),
      );
    }
    if (url.searchParams.has('token') || url.searchParams.has('access_token')) {
      return refuse(
        socket,
        new HookdError(
          'BAD_REQUEST',
          'a token in the URL is refused (it leaks into logs): send Authorization: Bearer <token>',
        ),
      );
    }
    let principal: Principal | undefined;
    if (viaConsole) {
      principal = await viaConsole(req);
      if (!principal)
        return refuse(socket, new HookdError('UNAUTHENTICATED', 'sign in to the console first'));
    } else {
      try {
        principal = await this.opts.auth.authenticate(identityRequestOf(req));
      } catch (err) {
        if (!(err instanceof HookdError)) throw err;
        return refuse(socket, err);
      }
    }
    const hooks = new Set(url.searchParams.getAll('hook'));
    const status = url.searchParams.get('status') as StatusFilter | null;
    if (status && !['2xx', '3xx', '4xx', '5xx', 'failed'].includes(status)) {
      return refuse(socket, new HookdError('BAD_REQUEST', 'status must be 2xx, 3xx, 4xx, 5xx or failed'));
    }
    this.wss().handleUpgrade(req, socket, head, (ws) => this.serve(ws, principal.user, hooks, status));
  }

  private serve(ws: WebSocket, owner: string, hooks: Set<string>, status: StatusFilter | null): void {
    const limit = this.opts.maxBufferedBytes ?? 1_048_576;
    let dropped = 0;
    let drainWatch: NodeJS.Timeout | undefined;
    const notifyDropped = () => {
      if (dropped === 0 || ws.bufferedAmount > limit || ws.readyState !== ws.OPEN) return;
      ws.send(JSON.stringify({ kind: 'dropped', Count: dropped }));
      dropped = 0;
      clearInterval(drainWatch);
      drainWatch = undefined;
    };
    (ws as WebSocket & { alive?: boolean }).alive = true;
    ws.on('pong', () => {
      (ws as WebSocket & { alive?: boolean }).alive = true;
    });
    const unsubscribe = this.opts.source.subscribe(
      (event) => {
        if (event.owner !== owner) return;
        if (hooks.size > 0 && !hooks.has(event.HookId)) return;
        if (status && !matchesStatus(event, status)) return;
        if (ws.bufferedAmount > limit) {
          dropped++;
          // Tell the client once its buffer has drained, even if no further event comes.
          drainWatch ??= setInterval(notifyDropped, 100);
          return;
        }
        notifyDropped();
        const { owner: _owner, ...message } = event;
        ws.send(JSON.stringify(message));
      },
      { owner },
    );
    let subscribed = true;
    const off = () => {
      clearInterval(drainWatch);
      if (!subscribed) return;
      subscribed = false;
      unsubscribe();
    };
    ws.on('close', off);
    ws.on('error', off);
  }

  /** Closes every client with 1001 (going away), as on daemon shutdown. */
  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    for (const ws of this.server?.clients ?? []) ws.close(1001, 'hookd is shutting down');
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /**
   * Ends every client now, those that ignored the close frame among them: the drain deadline has
   * passed, and one stalled client must not hold the daemon past `--shutdown-timeout`.
   */
  terminate(): void {
    for (const ws of this.server?.clients ?? []) ws.terminate();
  }
}

function matchesStatus(e: TailEvent, status: StatusFilter): boolean {
  if (e.kind !== 'attempt') return false;
  if (status === 'failed') return e.Outcome === 'failed' || e.Outcome === 'retrying';
  const code = typeof e.StatusCode === 'number' ? e.StatusCode : 0;
  return Math.floor(code / 100) === Number(status[0]);
}

function refuse(socket: Duplex, err: HookdError): void {
  const body = JSON.stringify(toProblem(err));
  const extra = Object.entries(err.headers ?? {})
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${err.status} ${err.title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
}
