/**
 * The report feature: `POST /_hookd/report` (and the dry run `/_hookd/match`) with its
 * `Idempotency-Key` handling, its span when tracing is on, and the rule that a 202 goes out only
 * once the fired callbacks are recorded.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { HookdConfig } from '../config/index.js';
import type { DeliveryPipeline } from '../delivery/index.js';
import type { MatchEngine } from '../engine/index.js';
import type { HookdError } from '../errors/index.js';
import type { ApiFeature } from '../http-api/index.js';
import { type IdempotencyStore, installIdempotency, isReportRequest } from '../idempotency/index.js';
import type { LoopGuard } from '../loops/index.js';
import type { UserStore } from '../store/index.js';
import type { Tracing } from '../tracing/index.js';
import { ADMIN_USER, mayReportForAnyone } from '../users/index.js';
import { REPORT_OPENAPI } from './report-openapi.js';
import { triggerRoutes } from './trigger-routes.js';

export interface ReportApiParts {
  engine: MatchEngine;
  deliveries: DeliveryPipeline;
  /** The absolute base of `$REQUEST_URI` for a request that came in with this Host. */
  settings: { reportBase(host: string | undefined): string };
  /** Why reports are refused up front (the store refuses writes), if they are. */
  faults: { unavailable(): HookdError | undefined };
  tracing: Tracing | undefined;
  opened: { idempotency: IdempotencyStore; store: Pick<UserStore, 'getUser'> };
  config: HookdConfig;
  log: Logger;
  /** Cuts hookd's own requests aimed at the report endpoint (src/loops/). */
  loops?: LoopGuard;
}

export function reportFeature(p: ReportApiParts): ApiFeature {
  return { name: 'report', register: (api) => reportApi(api, p), openApi: REPORT_OPENAPI };
}

function reportApi(api: FastifyInstance, p: ReportApiParts): void {
  // A reporter that got 202 can rely on the callbacks: they are recorded before the answer
  // goes out, so even an instance killed right after it loses none of them. The answer waits for
  // the end-of-turn commit, as a proxied response does, so the reports of one turn share it.
  api.addHook('onSend', async (req, reply, payload) => {
    if (reply.statusCode === 202 && isReportRequest(req)) await p.deliveries.settled();
    return payload;
  });
  installIdempotency(api, { store: p.opened.idempotency, ttlMs: p.config.idempotencyTtlMs, log: p.log });
  const base = (req: { headers: { host?: string | undefined } }) => p.settings.reportBase(req.headers.host);
  // Read per report, not cached: a revoked permission holds at once, on every instance. The admin
  // has every permission, always (its stored list is not consulted), so its reports read nothing.
  const forAnyone = async (user: string) =>
    user === ADMIN_USER || mayReportForAnyone(await p.opened.store.getUser(user));
  const loops = p.loops;
  const own =
    loops &&
    ((req: FastifyRequest) =>
      loops.inspect('POST', req.raw.url ?? '/', req.raw.rawHeaders).own !== undefined);
  const hidden = p.config.identityHeader === undefined ? [] : [p.config.identityHeader.toLowerCase()];
  triggerRoutes(api, p.engine, base, p.faults.unavailable, p.tracing, forAnyone, own, {
    bodyLimit: p.config.filterBodyLimit,
    hiddenHeaders: hidden,
  });
}
