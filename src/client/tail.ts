import type { IncomingMessage } from 'node:http';
import type WebSocket from 'ws';
import { HookdError, problemOf } from './hookd-error.js';
import { type Http, unreachable } from './http.js';
import type { TailEvent } from './types.js';

export interface TailOptions {
  /** Hooks (Ids or Names) to follow; none: all of the caller's. */
  hooks?: string[];
  /** Only attempts with this outcome. */
  status?: '2xx' | '3xx' | '4xx' | '5xx' | 'failed';
  /** Ends the iteration (and closes the socket) when aborted. */
  signal?: AbortSignal;
  /** Told each time the socket is (re)connected: `first` for the one the iteration started with. */
  onConnect?: (first: boolean) => void;
  /** Told when the socket dropped and a reconnection follows. */
  onDrop?: () => void;
}

/** Backoff between reconnections: 250 ms doubling to 5 s, reset after a good connection. */
export const TAIL_BACKOFF = { initialMs: 250, maxMs: 5000 } as const;
/** The server pings every 15 s: this long without a frame means the link is dead. */
const SILENCE_MS = 45_000;

interface Connection {
  ws: WebSocket;
  /** Frames not read yet; `done` once the socket is gone. */
  frames: TailEvent[];
  done: boolean;
  wake: () => void;
  waiting: (() => void) | undefined;
}

/**
 * The live tail as an async iterable: fired callbacks and attempts as they happen. The first
 * connection must succeed (else its error ends the iteration); after that a dropped socket (hookd
 * restarting) is reconnected with backoff for as long as it takes, while a refusal that would
 * repeat (401, 403, 404) ends it. Events of the gap are not replayed: the tail is live only.
 */
export async function* tail(http: Http, opts: TailOptions = {}): AsyncGenerator<TailEvent, void, undefined> {
  const { default: WebSocketClass } = await import('ws');
  const signal = opts.signal;
  // A function, not a test of `signal.aborted` in place: the flag changes while this awaits.
  const stopped = () => signal?.aborted === true;
  let first = true;
  let delay: number = TAIL_BACKOFF.initialMs;
  while (!stopped()) {
    let conn: Connection;
    try {
      conn = await connect(WebSocketClass, http, opts);
    } catch (e) {
      if (first || !retryable(e) || stopped()) {
        if (stopped()) return;
        throw e;
      }
      http.debug(`tail: reconnect failed (${(e as Error).message}); next try in ${delay} ms`);
      await sleep(delay, signal);
      delay = Math.min(delay * 2, TAIL_BACKOFF.maxMs);
      continue;
    }
    opts.onConnect?.(first);
    first = false;
    delay = TAIL_BACKOFF.initialMs;
    const abort = () => conn.ws.close(1000, 'tail stopped');
    signal?.addEventListener('abort', abort, { once: true });
    try {
      for (;;) {
        const next = conn.frames.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        if (conn.done) break;
        await new Promise<void>((r) => {
          conn.waiting = r;
        });
      }
    } finally {
      signal?.removeEventListener('abort', abort);
      // The caller stopped reading (break, return, throw): the socket goes with it.
      if (!conn.done) conn.ws.close(1000, 'tail stopped');
    }
    if (stopped()) return;
    opts.onDrop?.();
    await sleep(delay, signal);
    delay = Math.min(delay * 2, TAIL_BACKOFF.maxMs);
  }
}

function retryable(e: unknown): boolean {
  return !(e instanceof HookdError) || e.status === 0 || e.status >= 500;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}

/** `ws(s)://host/base/_hookd/tail?hook=…&status=…`. */
export function tailUrl(baseUrl: string, opts: Pick<TailOptions, 'hooks' | 'status'>): string {
  const url = new URL(`${baseUrl}/_hookd/tail`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  for (const h of opts.hooks ?? []) url.searchParams.append('hook', h);
  if (opts.status !== undefined) url.searchParams.set('status', opts.status);
  return url.href;
}

async function connect(WebSocketClass: typeof WebSocket, http: Http, opts: TailOptions): Promise<Connection> {
  const url = tailUrl(http.baseUrl, opts);
  const request = 'GET /_hookd/tail';
  const token = await http.token();
  http.debug(`> GET ${url} (WebSocket upgrade)`);
  return new Promise<Connection>((resolve, reject) => {
    // The token goes in the upgrade request's header: the API refuses one in the URL.
    const ws = new WebSocketClass(url, {
      headers: {
        ...(token !== undefined && { authorization: `Bearer ${token}` }),
        'user-agent': http.userAgent,
      },
      handshakeTimeout: 10_000,
      followRedirects: false,
    });
    const conn: Connection = {
      ws,
      frames: [],
      done: false,
      waiting: undefined,
      wake: () => {
        const w = conn.waiting;
        conn.waiting = undefined;
        w?.();
      },
    };
    let opened = false;
    let silence: NodeJS.Timeout | undefined;
    const alive = () => {
      clearTimeout(silence);
      silence = setTimeout(() => ws.terminate(), SILENCE_MS);
    };
    ws.on('unexpected-response', (_req, res: IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (text.length < 65536) text += chunk;
      });
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        const contentType = String(res.headers['content-type'] ?? '');
        reject(
          new HookdError(problemOf(status, contentType, text, request), request, {
            response: { contentType, text },
          }),
        );
        ws.terminate();
      });
    });
    ws.on('error', (err) => {
      if (!opened) reject(unreachable(err, request, http.baseUrl, 10_000));
      else http.debug(`tail: connection error: ${err.message}`);
    });
    ws.on('open', () => {
      opened = true;
      alive();
      resolve(conn);
    });
    ws.on('ping', alive);
    ws.on('message', (data, isBinary) => {
      alive();
      if (isBinary) return;
      try {
        conn.frames.push(JSON.parse(data.toString()) as TailEvent);
      } catch {
        http.debug('tail: a frame that is not JSON was left out');
        return;
      }
      conn.wake();
    });
    ws.on('close', () => {
      clearTimeout(silence);
      conn.done = true;
      conn.wake();
    });
  });
}
