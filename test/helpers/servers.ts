import assert from 'node:assert/strict';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Hook } from '../../src/hook/hook.js';
import { Accounts } from '../../src/users/accounts.js';
import { type ApiResponse, api, type TestDaemon } from './hookd.js';
import { counterSum } from './until.js';

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function shut(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A port on 127.0.0.1 that nothing listens on (bound once, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await shut(server);
  return port;
}

// ---------------------------------------------------------------------------------------------
// Callback receiver

/** One callback as the receiver saw it. */
export interface ReceivedCallback {
  method: string;
  /** Path and query of the callback request. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** `performance.now()` when the request head arrived. */
  arrivedAt: number;
  /** `Date.now()` when the request had fully arrived. */
  at: number;
  /** True once the receiver answered. */
  answered: boolean;
}

/** What the receiver answers: a status (with headers and body), or nothing at all until closed. */
export type Reply = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface ReceiverOptions {
  /** Every callback is answered this status with the body "ok" (200 unless told). */
  status?: number;
  /** Or each is answered as this says; `n` counts the calls since the last `reset()`, from 1. */
  reply?: (call: ReceivedCallback, n: number) => Reply;
}

export interface Receiver {
  /** Base URL, e.g. `http://127.0.0.1:41234`; hooks point at `${url}/some/path`. */
  url: string;
  port: number;
  /** Every callback received since the last `reset()`, in arrival order (held ones included). */
  calls: ReceivedCallback[];
  /** How the receiver answers; may be replaced while it runs. */
  reply: (call: ReceivedCallback, n: number) => Reply;
  /** Resolves with the calls once at least `n` have arrived; rejects after `timeoutMs` (a guard, not a measurement). */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedCallback[]>;
  /** Waits `ms`, then returns what arrived: for asserting that nothing (more) came. */
  settle(ms?: number): Promise<ReceivedCallback[]>;
  reset(): void;
  /** From now on, answers are held back until `release()` (a slow receiver). */
  hold(): void;
  release(): void;
  /** How many callbacks have been answered since the last `reset()`. */
  answered(): number;
  /** Requests received and not answered. */
  outstanding(): number;
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 that records the method, headers and body of each callback and
 * answers as `opts` says (200 "ok" unless told).
 */
export async function startReceiver(opts: ReceiverOptions = {}): Promise<Receiver> {
  let calls: ReceivedCallback[] = [];
  let waiters: { n: number; resolve: () => void }[] = [];
  let held: (() => void)[] | undefined;
  let answered = 0;
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const arrivedAt = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const call: ReceivedCallback = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        arrivedAt,
        at: Date.now(),
        answered: false,
      };
      calls.push(call);
      const ready = waiters.filter((w) => calls.length >= w.n);
      waiters = waiters.filter((w) => calls.length < w.n);
      for (const w of ready) w.resolve();
      const r = self.reply(call, calls.length);
      if (r === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      const answer = () => {
        answered++;
        call.answered = true;
        res.writeHead(r.status, r.headers).end(r.body ?? '');
      };
      if (held) held.push(answer);
      else answer();
    });
  });
  const port = await listen(server);
  const release = () => {
    const pending = held ?? [];
    held = undefined;
    for (const answer of pending) answer();
  };
  const status = opts.status ?? 200;
  const self: Receiver = {
    url: `http://127.0.0.1:${port}`,
    port,
    get calls() {
      return calls;
    },
    reply: opts.reply ?? (() => ({ status, headers: { 'content-type': 'text/plain' }, body: 'ok' })),
    waitFor(n, timeoutMs = 20_000) {
      if (calls.length >= n) return Promise.resolve(calls);
      return new Promise((resolve, reject) => {
        const waiter = {
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve(calls);
          },
        };
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== waiter);
          reject(
            new Error(
              `receiver got ${calls.length} callback(s) within ${timeoutMs} ms, expected ${n}: ${JSON.stringify(
                calls.map((c) => `${c.method} ${c.url} ${c.body.slice(0, 200)}`),
              )}`,
            ),
          );
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    async settle(ms = 300) {
      await sleep(ms);
      return calls;
    },
    reset() {
      calls = [];
      answered = 0;
    },
    hold() {
      held ??= [];
    },
    release,
    answered: () => answered,
    outstanding: () => calls.filter((c) => !c.answered).length,
    async close() {
      release();
      await shut(server);
    },
  };
  return self;
}

/** Where a receiver and the daemons that call it stand: taken before the requests under test. */
export interface FireMark {
  fired: number;
  calls: number;
}

async function firedTotal(opsUrls: string[]): Promise<number> {
  let n = 0;
  for (const url of opsUrls) n += await counterSum(url, 'hookd_hooks_fired_total');
  return n;
}

/** The mark for `firedCalls`: hookd's fired count (from each daemon's /metrics) and what `receiver` has. */
export async function fireMark(opsUrls: string | string[], receiver: Receiver): Promise<FireMark> {
  return { fired: await firedTotal([opsUrls].flat()), calls: receiver.calls.length };
}

/**
 * The receiver's calls once every callback fired since `mark` has arrived: the proof that nothing
 * more is coming, instead of waiting a fixed time. hookd counts a fire before the client has its
 * response (docs/DECISIONS.md "AfterCompletion: recorded before the response ends"; a report's 202
 * comes after its fires), so once the requests under test are answered the count is final. Every
 * callback fired in between must go to `receiver` (answered 2xx, so none is retried).
 */
export async function firedCalls(
  opsUrls: string | string[],
  receiver: Receiver,
  mark: FireMark,
  timeoutMs?: number,
): Promise<ReceivedCallback[]> {
  const fired = (await firedTotal([opsUrls].flat())) - mark.fired;
  return receiver.waitFor(mark.calls + fired, timeoutMs);
}

// ---------------------------------------------------------------------------------------------
// Upstream

/** A request as the upstream saw it (the head; `body` once it has been read in full). */
export interface UpstreamRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body?: Buffer;
}

export type UpstreamHandler = (req: IncomingMessage, res: ServerResponse, seen: UpstreamRequest) => void;

export interface Upstream {
  url: string;
  port: number;
  server: Server;
  requests: UpstreamRequest[];
  reset(): void;
  close(): Promise<void>;
}

/**
 * The service behind hookd: a real HTTP server that records each request head. Without a
 * handler it reads the body and answers 200 with `{"method","url","bodyBytes"}`; `/status/NNN…`
 * answers NNN instead.
 */
export async function startUpstream(handler?: UpstreamHandler): Promise<Upstream> {
  let requests: UpstreamRequest[] = [];
  const server = createServer((req, res) => {
    const seen: UpstreamRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      rawHeaders: req.rawHeaders,
    };
    requests.push(seen);
    if (handler) return handler(req, res, seen);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.body = Buffer.concat(chunks);
      const m = /^\/status\/(\d{3})(?:[/?]|$)/.exec(seen.url);
      const body = JSON.stringify({ method: seen.method, url: seen.url, bodyBytes: seen.body.length });
      res.writeHead(m ? Number(m[1]) : 200, { 'content-type': 'application/json' }).end(body);
    });
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    get requests() {
      return requests;
    },
    reset() {
      requests = [];
    },
    close: () => shut(server),
  };
}

// ---------------------------------------------------------------------------------------------
// Client

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
  /** `performance.now()` when the response body ended. */
  endedAt: number;
}

/**
 * One request on a fresh connection with Node's own client, which (unlike fetch) lets a test set
 * hop-by-hop headers such as `Connection`, `Keep-Alive` and `TE`.
 */
export function send(
  url: string,
  opts: { method?: string; headers?: Record<string, string | string[]>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            body: Buffer.concat(chunks).toString('utf8'),
            endedAt: performance.now(),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

// ---------------------------------------------------------------------------------------------
// Hooks and users through the API

/** Creates a hook through `POST /hooks` and insists on 201. */
export async function createHook(
  d: Pick<TestDaemon, 'url' | 'token'>,
  body: Record<string, unknown>,
  opts: { token?: string; apiBase?: string } = {},
): Promise<Hook> {
  const base = opts.apiBase && opts.apiBase !== '/' ? opts.apiBase : '';
  const res = await api<Hook>(d.url, opts.token ?? d.token, 'POST', `${base}/hooks`, body);
  assert.equal(res.status, 201, `create hook: ${res.text}`);
  return res.body;
}

/**
 * Adds a user to the daemon's store and returns a fresh API token for it. The user may observe
 * every request (`["/"]`) unless the test says otherwise: tests of other features are not about
 * scopes (test/users/ is).
 */
export async function addUser(d: TestDaemon, name: string, scopes: string[] = ['/']): Promise<string> {
  const accounts = new Accounts(d.hookd.store);
  await accounts.addUser(name, scopes);
  return (await accounts.createToken(name)).token;
}

/** `POST /_hookd/portal-links` as the daemon's admin, for `user`: the answer, its status not asserted. */
export function portalLink(
  d: Pick<TestDaemon, 'url' | 'token'>,
  user: string,
  extra: Record<string, unknown> = {},
): Promise<ApiResponse<{ Url: string; ExpiresAt: string }>> {
  return api(d.url, d.token, 'POST', '/_hookd/portal-links', { User: user, ...extra });
}
