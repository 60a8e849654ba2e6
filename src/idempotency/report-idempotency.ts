/**
 * `Idempotency-Key` on `POST /_hookd/report` (draft-ietf-httpapi-idempotency-key-header): the
 * first request with a key runs and its answer is stored; a repeat with the same key and body
 * gets that answer again, marked `Idempotent-Replayed: true`, and fires nothing. The same key
 * with another body is 422 IDEMPOTENCY_KEY_REUSED; a repeat that arrives while the first is still
 * running waits for its answer (up to a few seconds, then 409 IDEMPOTENCY_KEY_IN_USE). Keys are
 * per user. Answers of 5xx are not kept: the key is given up, so a retry runs the report again.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { DEFAULT_IDEMPOTENCY_TTL_MS } from '../config/index.js';
import { HookdError } from '../errors/index.js';
import { principalOf } from '../http-api/index.js';
import type { IdempotencyStore } from './idempotency-store.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export { DEFAULT_IDEMPOTENCY_TTL_MS };
/** A claim not answered within this time is taken over (its instance died mid-request). */
export const STALE_CLAIM_MS = 60_000;
const MAX_KEY_LENGTH = 255;
// Printable ASCII: the key goes into a database and error messages.
const KEY = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
const WAIT_STEP_MS = 50;
const PRUNE_BATCH = 1000;

export interface IdempotencyOptions {
  store: IdempotencyStore;
  /** How long a key is kept, ms (default 24 h). */
  ttlMs?: number;
  /** How long a concurrent duplicate waits for the first request's answer, ms (default 5 s). */
  waitMs?: number;
  /** How often expired keys are removed, ms (default 10 min; 0: never). */
  pruneIntervalMs?: number;
  /** Whether a route takes keys (default: `POST /_hookd/report`, `isReportRequest`). */
  applies?: (req: FastifyRequest) => boolean;
  log?: Logger;
  now?: () => number;
}

interface Held {
  owner: string;
  key: string;
  fingerprint: string;
  replay: boolean;
}

const HELD = Symbol('idempotency');

/** `POST {base}/_hookd/report`, by its route template. */
export function isReportRequest(req: FastifyRequest): boolean {
  return req.method === 'POST' && req.routeOptions.url?.endsWith('/_hookd/report') === true;
}

/** Installs the hooks on the API; returns a function that stops the periodic pruning. */
export function installIdempotency(app: FastifyInstance, opts: IdempotencyOptions): () => void {
  const store = opts.store;
  const ttlMs = opts.ttlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
  const waitMs = opts.waitMs ?? 5000;
  const now = opts.now ?? Date.now;
  const applies = opts.applies ?? isReportRequest;

  app.addHook('preHandler', async (req, reply) => {
    if (!applies(req)) return;
    const raw = rawValues(req.raw.rawHeaders, IDEMPOTENCY_HEADER);
    if (raw.length === 0) return;
    const key = parseKey(raw);
    const owner = principalOf(req).user;
    const fingerprint = fingerprintOf(req);
    const deadline = now() + waitMs;
    for (;;) {
      const claim = await guarded(() =>
        store.claim({ owner, key, fingerprint, now: now(), ttlMs, staleMs: STALE_CLAIM_MS }),
      );
      switch (claim.kind) {
        case 'claimed':
          (req as unknown as Record<symbol, Held>)[HELD] = { owner, key, fingerprint, replay: false };
          return;
        case 'replay': {
          (req as unknown as Record<symbol, Held>)[HELD] = { owner, key, fingerprint, replay: true };
          const a = claim.answer;
          return reply.code(a.status).header(REPLAYED_HEADER, 'true').type(a.contentType).send(a.body);
        }
        case 'mismatch':
          throw new HookdError(
            'IDEMPOTENCY_KEY_REUSED',
            `the Idempotency-Key "${key}" was already used for a different request (another body); send a new key for a new report`,
          );
        case 'in-progress':
          if (now() >= deadline) {
            throw new HookdError(
              'IDEMPOTENCY_KEY_IN_USE',
              `a request with the Idempotency-Key "${key}" is still being processed; retry in a moment to get its answer`,
              { headers: { 'Retry-After': '1' } },
            );
          }
          await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
      }
    }
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const held = (req as unknown as Record<symbol, Held | undefined>)[HELD];
    if (held === undefined || held.replay) return payload;
    const { owner, key, fingerprint } = held;
    try {
      if (reply.statusCode >= 500 || typeof payload !== 'string') {
        await store.release(owner, key, fingerprint);
      } else {
        const type = reply.getHeader('content-type');
        await store.complete(owner, key, fingerprint, {
          status: reply.statusCode,
          contentType: typeof type === 'string' ? type : 'application/json',
          body: payload,
        });
      }
    } catch (err) {
      // The report ran; only its replay is lost (a repeat would run it again).
      opts.log?.error({ err, key }, 'storing the answer of an Idempotency-Key failed');
    }
    return payload;
  });

  const interval = opts.pruneIntervalMs ?? 10 * 60 * 1000;
  if (interval <= 0) return () => undefined;
  const prune = async (): Promise<void> => {
    try {
      let total = 0;
      for (;;) {
        const n = await store.prune(now(), PRUNE_BATCH);
        total += n;
        if (n < PRUNE_BATCH) break;
      }
      if (total > 0) opts.log?.info({ removed: total }, 'expired idempotency keys removed');
    } catch (err) {
      opts.log?.warn({ err }, 'removing expired idempotency keys failed');
    }
  };
  const timer = setInterval(prune, interval);
  timer.unref();
  void prune();
  const stop = () => clearInterval(timer);
  app.addHook('onClose', async () => stop());
  return stop;
}

/**
 * Every value of a header as sent, from the raw header lines: Node joins repeated unknown headers
 * into one `k1, k2`, which would pass for a single key.
 */
function rawValues(rawHeaders: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.length === name.length && rawHeaders[i]!.toLowerCase() === name)
      out.push(rawHeaders[i + 1]!);
  }
  return out;
}

function parseKey(raw: string[]): string {
  const key = raw[0]!;
  if (raw.length > 1) {
    throw new HookdError('BAD_REQUEST', 'send one Idempotency-Key header, not several', {
      errors: [{ field: 'Idempotency-Key', message: 'is given more than once' }],
    });
  }
  if (key.length > MAX_KEY_LENGTH || !KEY.test(key)) {
    throw new HookdError(
      'BAD_REQUEST',
      `the Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters (a UUID is a good key)`,
      {
        errors: [
          { field: 'Idempotency-Key', message: `must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters` },
        ],
      },
    );
  }
  return key;
}

/** The request as a repeat must match it: method, path and the parsed JSON body. */
function fingerprintOf(req: FastifyRequest): string {
  return createHash('sha256')
    .update(`${req.method} ${req.routeOptions.url ?? req.url}\n`)
    .update(JSON.stringify(req.body ?? null))
    .digest('hex');
}

/** A store fault is 503, never a 500 (the client may retry with the same key). */
async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof HookdError) throw err;
    throw new HookdError(
      'UNAVAILABLE',
      `the idempotency store cannot be reached (${(err as Error).message}); retry with the same Idempotency-Key`,
      { headers: { 'Retry-After': '1' } },
    );
  }
}
