/**
 * What crosses a worker's IPC channel (docs/DECISIONS.md "Using every core: workers"). JSON over
 * the cluster channel, in order. Every message that changes what a worker knows carries the
 * primary's sequence number; the worker answers `applied` with it, which is what a barrier waits on.
 */
import type { FiredEvent } from '../engine/index.js';
import type { Hook } from '../hook/index.js';
import type { MetricsSnapshot } from '../observability/index.js';

export type ToWorker =
  /** A chunk of a whole hook set; the `set` that follows makes the chunks since the last `set` the set. */
  | { t: 'hooks'; hooks: Hook[] }
  | { t: 'set'; seq: number }
  | { t: 'saved'; seq: number; hook: Hook }
  | { t: 'deleted'; seq: number; id: string }
  /** Users or their scopes may have changed: drop the cached scopes. */
  | { t: 'users'; seq: number }
  /** Fired batches up to `n` are recorded. */
  | { t: 'ack'; n: number }
  | { t: 'reply'; id: number; value?: unknown; error?: string }
  | { t: 'reload' }
  /** A scrape of the primary's /metrics: answer with this process's snapshot. */
  | { t: 'metrics'; id: number }
  | { t: 'stop' };

export type Ask = { what: 'getUser'; name: string } | { what: 'listUsers' } | { what: 'barrier' };

export type FromWorker =
  /** Its message listener is in place (messages sent before it would be lost): send the hook set. */
  | { t: 'hello' }
  | { t: 'listening'; url: string }
  | { t: 'applied'; seq: number }
  | { t: 'fired'; n: number; events: FiredEvent[] }
  | ({ t: 'ask'; id: number } & Ask)
  /** A `POST …/reload` passed on by this worker succeeded: every worker reloads too. */
  | { t: 'reload-all' }
  | { t: 'metrics'; id: number; metrics: MetricsSnapshot };

/** The headers a worker adds to a request it passes on to the primary's private listener. */
export const SECRET_HEADER = 'x-hookd-worker-secret';
export const PEER_HEADER = 'x-hookd-worker-peer';
/** The environment a worker is started with: the primary's private URL and the per-boot secret. */
export const ENV_API = 'HOOKD_WORKER_API';
export const ENV_SECRET = 'HOOKD_WORKER_SECRET';
/** The loop-mark key (src/loops/): a worker's proxy cuts hookd's own requests as the primary's would. */
export const ENV_LOOP_KEY = 'HOOKD_WORKER_LOOP_KEY';
/** The public port the primary claimed (public-socket.ts): `--listen HOST:0` made one port for all. */
export const ENV_PORT = 'HOOKD_WORKER_PORT';
/** Hooks per message when a whole set is sent (100,000 hooks: 50 messages). */
export const CHUNK = 2000;
