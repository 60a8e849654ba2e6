import type { IncomingMessage } from 'node:http';
import type WebSocket from 'ws';
import { errorFromResponse, transportError } from './api-errors.js';
import type { CliContext, Credentials } from './context.js';
import { ApiError, AuthError } from './exit-codes.js';

/** Backoff between reconnection attempts: 250 ms doubling to 5 s, reset after a good connection. */
export const BACKOFF = { initialMs: 250, maxMs: 5000 } as const;
/** The server pings every 15 s (docs/API.md); this long without a frame means the link is dead. */
const SILENCE_MS = 45_000;

/** An open socket: `closed` resolves when it is gone, for whatever reason. */
export interface Connection<T> {
  ws: WebSocket;
  closed: Promise<void>;
  /** What the server said when it was ready (listen's listener Id); undefined for tail. */
  info: T;
}

export interface SocketTarget {
  url: string;
  /** The API path, for the error message of a refused upgrade. */
  path: string;
  /** The server's base URL, for the error message of a transport failure. */
  server: string;
  creds: Credentials;
}

/**
 * How the connection becomes ready: on the upgrade (tail), or when a text frame calls `ready`
 * (listen waits for the server's "ready" message, which carries its listener Id).
 */
export type OnText<T> = (text: string, ws: WebSocket, ready: (info: T) => void) => void;

/** Opens the WebSocket; rejects with the error hookctl would exit with (3, 4 or 1). */
export function openSocket<T>(
  WebSocketClass: typeof WebSocket,
  target: SocketTarget,
  ctx: CliContext,
  onText: OnText<T>,
  readyOnOpen?: { info: T },
): Promise<Connection<T>> {
  const { url, creds } = target;
  return new Promise<Connection<T>>((resolve, reject) => {
    ctx.debug(`> GET ${url} (WebSocket upgrade)`);
    const ws = new WebSocketClass(url, {
      // The token goes in the upgrade request's header: the API refuses one in the URL.
      headers: {
        ...(creds.token !== undefined && { authorization: `Bearer ${creds.token}` }),
        'user-agent': 'hookctl',
      },
      handshakeTimeout: 10_000,
      followRedirects: false,
    });
    let opened = false;
    let silence: NodeJS.Timeout | undefined;
    const alive = () => {
      clearTimeout(silence);
      silence = setTimeout(() => {
        ctx.debug(`no frame for ${SILENCE_MS} ms: dropping the connection`);
        ws.terminate();
      }, SILENCE_MS);
    };
    const closed = new Promise<void>((done) => {
      ws.on('close', (code, reason) => {
        clearTimeout(silence);
        ctx.debug(`< close ${code} ${reason.toString()}`);
        done();
      });
    });
    const ready = (info: T) => resolve({ ws, closed, info });
    ws.on('unexpected-response', (_req, res: IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (text.length < 65536) text += chunk;
      });
      res.on('end', () => {
        ctx.debug(`< ${res.statusCode} (upgrade refused)`);
        const status = res.statusCode ?? 0;
        reject(
          status === 401 && creds.missing
            ? creds.missing
            : errorFromResponse(
                status,
                String(res.headers['content-type'] ?? ''),
                text,
                target.path,
                creds.source,
              ),
        );
        ws.terminate();
      });
    });
    ws.on('error', (err) => {
      if (!opened) reject(transportError(target.server, err));
      else ctx.debug(`connection error: ${err.message}`);
    });
    ws.on('open', () => {
      opened = true;
      ctx.debug('< 101 connected');
      alive();
      if (readyOnOpen) ready(readyOnOpen.info);
    });
    ws.on('ping', alive);
    ws.on('message', (data, isBinary) => {
      alive();
      if (!isBinary) onText(data.toString(), ws, ready);
    });
  });
}

/** Errors worth retrying after a drop: the daemon restarting, not a refusal that will repeat. */
function retryable(e: unknown): boolean {
  if (e instanceof AuthError) return false;
  if (e instanceof ApiError) return e.status >= 500;
  return true;
}

/** SIGINT and SIGTERM, for a command that streams until stopped. */
export function defaultOnSignal(handler: (signal: NodeJS.Signals) => void): () => void {
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

export interface Reconnecting<T> {
  /** The close reason sent when Ctrl-C stops the loop, e.g. "hookctl tail stopped". */
  stopReason: string;
  connect: () => Promise<Connection<T>>;
  /** Each good connection: `first` is the one the command started with. */
  connected: (conn: Connection<T>, first: boolean) => void | Promise<void>;
  /** The connection dropped and the loop will try again. */
  dropped: () => void;
}

/**
 * Keeps a WebSocket open until Ctrl-C (which ends it, so the command exits 0). The first
 * connection must succeed (else its error is the command's); after that, drops are retried with
 * backoff for as long as it takes, since hookd restarting is the usual cause.
 */
export async function keepConnected<T>(ctx: CliContext, loop: Reconnecting<T>): Promise<void> {
  let stopping = false;
  let current: WebSocket | undefined;
  let wake: (() => void) | undefined;
  const stop = () => {
    stopping = true;
    current?.close(1000, loop.stopReason);
    wake?.();
  };
  const unsubscribe = (ctx.deps.onSignal ?? defaultOnSignal)(() => stop());
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  try {
    let first = true;
    let delay: number = BACKOFF.initialMs;
    while (!stopping) {
      let conn: Connection<T>;
      try {
        conn = await loop.connect();
      } catch (e) {
        if (first || !retryable(e) || stopping) {
          if (stopping) return;
          throw e;
        }
        ctx.debug(`reconnect failed (${(e as Error).message}); next try in ${delay} ms`);
        await sleep(delay);
        delay = Math.min(delay * 2, BACKOFF.maxMs);
        continue;
      }
      current = conn.ws;
      if (stopping) conn.ws.close(1000);
      else await loop.connected(conn, first);
      first = false;
      delay = BACKOFF.initialMs;
      await conn.closed;
      current = undefined;
      if (stopping) break;
      loop.dropped();
      await sleep(delay);
      delay = Math.min(delay * 2, BACKOFF.maxMs);
    }
  } finally {
    unsubscribe();
  }
}
