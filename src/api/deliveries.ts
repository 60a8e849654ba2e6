import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { DeliveryPipeline, RedeliveryFilter } from '../delivery/index.js';
import { DELIVERY_ID_SHAPE, isTestRequest, triggerMessage } from '../delivery/index.js';
import { type FieldError, HookdError } from '../errors/index.js';
import { type Hook, isoTimestamp } from '../hook/index.js';
import { type ApiFeature, principalOf, resource } from '../http-api/index.js';
import type { PaceNote } from '../pace/index.js';
import { lastReceipts, receiptOf } from '../receipts/index.js';
import type { HookService } from '../service/index.js';
import { publicKeyOf } from '../signing/index.js';
import {
  type AttemptRecord,
  DELIVERY_STATUSES,
  type DeliveryQuery,
  type DeliveryRecord,
  type DeliveryStatus,
} from '../store/index.js';
import { didYouMean, withoutPassword } from '../util/index.js';
import { DELIVERIES_OPENAPI } from './deliveries-openapi.js';
import { parsePageQuery } from './page-query.js';

/** The delivery side as the routes use it: the log as recorded, redelivery, the signing secrets. */
export type DeliveryRouteView = Pick<DeliveryPipeline, 'reads' | 'signing' | 'redeliver' | 'redeliverBulk'> &
  Partial<Pick<DeliveryPipeline, 'pace'>>;

export interface DeliveryRouteDeps {
  hooks: HookService;
  pipeline: DeliveryRouteView;
  /** The API base (`/` or e.g. `/api`), for `Link` headers. */
  base: string;
  /** `hookctl listen`'s attempts of a delivery, as AttemptLog entries (src/listen/). */
  listenerAttempts?: (deliveryId: string) => Promise<Record<string, unknown>[]>;
}

const DEFAULT_PAGE = 100;
const STATUS_RULE = `must be one of ${DELIVERY_STATUSES.join(', ')}`;

/**
 * The delivery log, redelivery and signing secrets (docs/API.md "Deliveries"). Every route checks
 * ownership through the hook: another user's hook or delivery is 404, like an unknown one.
 */
export function deliveryRoutes(app: FastifyInstance, deps: DeliveryRouteDeps): void {
  const { hooks, pipeline } = deps;
  const prefix = deps.base === '/' ? '' : deps.base;

  resource(
    app,
    '/hooks/:id/deliveries',
    {
      GET: async (req, reply) => {
        const hook = await hooks.get(principalOf(req).user, idOf(req));
        const query = parseListQuery(req);
        const page = await pipeline.reads.list(hook.Id, query);
        // The pace its receiver sets now (src/pace/): `hookctl deliveries` prints it.
        const receiver = pipeline.pace?.receiverOf(hook.Callback);
        if (receiver !== undefined && pipeline.pace !== undefined) {
          const { limit, max, note } = pipeline.pace.current(receiver);
          reply.header(
            'Hookd-Receiver-Concurrency',
            `limit=${limit}; max=${max}; receiver="${receiver}"${noteParams(note)}`,
          );
        }
        if (page.next !== undefined) {
          const params = new URLSearchParams();
          params.set('limit', String(query.limit));
          params.set('after', page.next);
          const q = req.query as Record<string, unknown>;
          for (const k of ['status', 'since', 'until'])
            if (typeof q[k] === 'string') params.set(k, q[k] as string);
          reply.header('Link', `<${prefix}/hooks/${hook.Id}/deliveries?${params.toString()}>; rel="next"`);
        }
        // A broker delivery's outcome is its receipt, read from its attempts (src/receipts/).
        const receipts = await lastReceipts(pipeline.reads, page.items);
        return reply.send(page.items.map((d) => presentDelivery(d, receipts.get(d.id))));
      },
    },
    { events: true },
  );

  resource(
    app,
    '/_hookd/deliveries/:id',
    {
      GET: async (req, reply) => {
        const id = deliveryIdOf(req);
        const found = await pipeline.reads.getWithAttempts(id);
        if (!found) throw deliveryNotFound(id);
        await ownHook(hooks, req, found.delivery.hookId, id);
        return reply.send({
          ...presentDelivery(
            found.delivery,
            found.delivery.status === 'succeeded' && found.delivery.lastStatusCode === null
              ? receiptOf(found.attempts)
              : undefined,
          ),
          AttemptLog: [...found.attempts.map(presentAttempt), ...((await deps.listenerAttempts?.(id)) ?? [])],
        });
      },
    },
    { events: true },
  );

  resource(
    app,
    '/_hookd/deliveries/:id/redeliver',
    {
      POST: async (req, reply) => {
        const id = deliveryIdOf(req);
        const found = await pipeline.reads.get(id);
        if (!found) throw deliveryNotFound(id);
        await ownHook(hooks, req, found.hookId, id);
        const queued = await pipeline.redeliver(id);
        if (!queued) throw deliveryNotFound(id);
        req.log.info({ deliveryId: id, hookId: found.hookId }, 'delivery queued again');
        return reply.code(202).send(presentDelivery(queued));
      },
    },
    { events: true },
  );

  resource(
    app,
    '/hooks/:id/redeliver',
    {
      POST: async (req, reply) => {
        const hook = await hooks.get(principalOf(req).user, idOf(req));
        const filter = parseRedeliveryFilter(req.body);
        const result = await pipeline.redeliverBulk(hook.Id, filter);
        // A dry run changes nothing: 200, with what a real run would queue.
        return reply.code(filter.dryRun ? 200 : 202).send({
          queued: result.queued,
          pending: result.pending,
          failed: result.failed,
          ...(filter.dryRun && { dryRun: true }),
        });
      },
    },
    { events: true },
  );

  resource(
    app,
    '/hooks/:id/secret',
    {
      GET: async (req, reply) => {
        const hook = await hooks.get(principalOf(req).user, idOf(req));
        const secret = await pipeline.signing.secretFor(hook.Id, hook.Persist);
        return reply.send({ Secret: secret, PublicKey: publicKeyOf(secret) });
      },
    },
    { events: true },
  );

  resource(
    app,
    '/hooks/:id/secret/rotate',
    {
      POST: async (req, reply) => {
        const hook = await hooks.get(principalOf(req).user, idOf(req));
        const r = await pipeline.signing.rotateSecret(hook.Id, hook.Persist);
        req.log.info({ hookId: hook.Id }, 'signing secret rotated');
        return reply.send({
          Secret: r.secret,
          PublicKey: publicKeyOf(r.secret),
          PreviousValidUntil: isoTimestamp(new Date(r.previousValidUntil)),
        });
      },
    },
    { events: true },
  );
}

/** What a delivery held in memory adds to its record (src/delivery/delivery.ts). */
interface LiveView {
  buffered?: boolean;
  heldBy?: string;
  heldBehind?: string;
}

/** The API's view of a delivery (docs/API.md). The request's headers are not shown: they may hold credentials. */
export function presentDelivery(d: DeliveryRecord, receipt?: string): Record<string, unknown> {
  return {
    Id: d.id,
    HookId: d.hookId,
    Status: d.status,
    Attempts: d.attempts,
    Created: isoTimestamp(new Date(d.created)),
    NextAttempt: d.nextAttempt === null ? null : isoTimestamp(new Date(d.nextAttempt)),
    LastStatusCode: d.lastStatusCode,
    LastError: d.lastError,
    // A broker's delivery has no status: its receipt says it arrived ("confirmed by …").
    ...(receipt !== undefined && { LastReceipt: receipt }),
    Trigger: triggerMessage(d.hookId, d.trigger),
    // A test event from the console says so, so that nobody takes it for real traffic.
    ...(isTestRequest(d.request.headers) && { Test: true }),
    Request: {
      Method: d.request.method,
      Url: withoutPassword(d.request.url),
      ContentType: contentTypeOf(d.request.headers),
      Body: d.request.body ?? null,
    },
    // Only while it applies: the store refused its write (held in memory, not yet durable), and
    // what holds a waiting delivery back (an endpoint's or host's limit or open circuit).
    ...((d as LiveView).buffered === true && { Durable: false }),
    ...(d.status === 'pending' &&
      typeof (d as LiveView).heldBy === 'string' && { HeldBy: (d as LiveView).heldBy }),
    ...(typeof (d as LiveView).heldBehind === 'string' && { HeldBehind: (d as LiveView).heldBehind }),
  };
}

/** One entry of a delivery's `AttemptLog`. */
export function presentAttempt(a: AttemptRecord): Record<string, unknown> {
  return {
    Attempt: a.attempt,
    Time: isoTimestamp(new Date(a.time)),
    StatusCode: a.statusCode,
    LatencyMs: a.latencyMs,
    Error: a.error,
    ResponseBody: a.responseBody,
    // Only when the hook's RateLimit held the attempt back.
    ...(a.rateLimitWaitMs !== undefined && { RateLimitWaitMs: a.rateLimitWaitMs }),
  };
}

function contentTypeOf(headers: Record<string, string>): string | null {
  for (const name in headers) if (name.toLowerCase() === 'content-type') return headers[name]!;
  return null;
}

function idOf(req: FastifyRequest): string {
  return (req.params as { id: string }).id;
}

function deliveryIdOf(req: FastifyRequest): string {
  const id = idOf(req);
  if (!DELIVERY_ID_SHAPE.test(id)) throw deliveryNotFound(id);
  return id;
}

function deliveryNotFound(id: string): HookdError {
  return new HookdError('NOT_FOUND', `no delivery with Id "${id.slice(0, 64)}"`);
}

/** The delivery's hook must be the caller's; otherwise the delivery does not exist for them. */
async function ownHook(
  hooks: HookService,
  req: FastifyRequest,
  hookId: string,
  deliveryId: string,
): Promise<Hook> {
  try {
    return await hooks.get(principalOf(req).user, hookId);
  } catch (err) {
    // Not the hook's message: it would reveal the Id of another user's hook.
    if (err instanceof HookdError && err.code === 'NOT_FOUND') throw deliveryNotFound(deliveryId);
    throw err;
  }
}

function parseTime(value: unknown, field: string, errors: FieldError[]): number | undefined {
  if (value === undefined) return undefined;
  const t = typeof value === 'string' && /^\d{4}-\d\d-\d\d/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(t)) {
    errors.push({ field, message: 'must be an ISO 8601 time, e.g. 2026-11-22T12:00:00Z' });
    return undefined;
  }
  return t;
}

function parseStatus(value: unknown, errors: FieldError[]): DeliveryStatus | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && (DELIVERY_STATUSES as readonly string[]).includes(value)) {
    return value as DeliveryStatus;
  }
  errors.push({ field: 'status', message: `${STATUS_RULE}${didYouMean(value, DELIVERY_STATUSES)}` });
  return undefined;
}

function fail(errors: FieldError[]): never {
  throw new HookdError('BAD_REQUEST', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });
}

function parseListQuery(req: FastifyRequest): DeliveryQuery & { limit: number } {
  const q = req.query as Record<string, unknown>;
  const errors: FieldError[] = [];
  const page = parsePageQuery(q, { shape: DELIVERY_ID_SHAPE, rule: 'must be a delivery Id (msg_…)' }, errors);
  const query: DeliveryQuery & { limit: number } = { ...page, limit: page.limit ?? DEFAULT_PAGE };
  const status = parseStatus(q.status, errors);
  if (status !== undefined) query.status = status;
  const since = parseTime(q.since, 'since', errors);
  if (since !== undefined) query.since = since;
  const until = parseTime(q.until, 'until', errors);
  if (until !== undefined) query.until = until;
  if (errors.length) fail(errors);
  return query;
}

function parseRedeliveryFilter(body: unknown): RedeliveryFilter {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    fail([
      {
        field: '(body)',
        message: 'must be a JSON object such as {"status":"failed","since":"2026-11-22T00:00:00Z"}',
      },
    ]);
  }
  const b = body as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const key of Object.keys(b)) {
    if (key !== 'status' && key !== 'since' && key !== 'until' && key !== 'dryRun') {
      errors.push({ field: key, message: 'is not a redelivery filter; use status, since, until and dryRun' });
    }
  }
  const filter: RedeliveryFilter = {};
  if (b.dryRun !== undefined && typeof b.dryRun !== 'boolean')
    errors.push({ field: 'dryRun', message: 'must be true or false' });
  if (b.dryRun === true) filter.dryRun = true;
  const status = parseStatus(b.status, errors);
  if (status !== undefined) filter.status = status;
  const since = parseTime(b.since, 'since', errors);
  if (since !== undefined) filter.since = since;
  const until = parseTime(b.until, 'until', errors);
  if (until !== undefined) filter.until = until;
  if (errors.length) fail(errors);
  return filter;
}

/** The delivery log, redelivery and the signing secrets. */
export function deliveriesFeature(deps: DeliveryRouteDeps): ApiFeature {
  return { name: 'deliveries', register: (api) => deliveryRoutes(api, deps), openApi: DELIVERIES_OPENAPI };
}

/**
 * Why the limit is below the maximum, as header parameters: `; state=ramping` or
 * `; state=lowered; after*=UTF-8''…` (RFC 8187: the words hold a `×`, and a header is Latin-1).
 */
function noteParams(note: PaceNote | undefined): string {
  if (note === undefined) return '';
  return note.state === 'ramping'
    ? '; state=ramping'
    : `; state=lowered; after*=UTF-8''${encodeURIComponent(note.after)}`;
}
