import type { FastifyRequest } from 'fastify';
import type { HookStateView } from '../api/index.js';
import type { DeliveryPipeline } from '../delivery/index.js';
import type { MatchEngine } from '../engine/index.js';
import type { HookService } from '../service/index.js';
import type { DeliveryAggregates } from '../store/index.js';

/** What the console's pages use: the same services as the API. */
export interface PageDeps {
  root: string;
  /** The API base (`/` or e.g. `/api`). */
  base: string;
  hooks: HookService;
  pipeline: DeliveryPipeline;
  engine: MatchEngine;
  aggregates: DeliveryAggregates;
  reportBase: (req: FastifyRequest) => string;
  notificationEndpoints?: (owner: string) => readonly string[];
  /** The state the API shows (`unverified` while the callback origin has not agreed). */
  hookStateView?: HookStateView;
}
