import {
  type DeliveryRouteDeps,
  deliveriesFeature,
  type HookStateView,
  hooksFeature,
  type Reloadable,
  type ReportApiParts,
  reloadFeature,
  reportFeature,
  TAIL_FEATURE,
  type UserRouteDeps,
  usersFeature,
} from '../api/index.js';
import { type ConsoleDeps, consoleFeature } from '../console/index.js';
import type { ApiFeature } from '../http-api/index.js';
import { LISTEN_FEATURE } from '../listen/index.js';
import type { PortalLinkDeps, PortalPagesDeps } from '../portal/index.js';
import { portalLinksFeature, portalPagesFeature } from '../portal/index.js';
import type { HookService } from '../service/index.js';

/** What each feature of the API needs, as the daemon hands it over. */
export interface ApiParts {
  apiBase: string;
  hooks: HookService;
  hookStateView?: HookStateView | undefined;
  report: ReportApiParts;
  reload: Reloadable;
  deliveries: DeliveryRouteDeps;
  users: UserRouteDeps;
  /** Auto-disable's enable endpoint and the notification endpoints (src/notifications/). */
  operations: { feature(base: string): ApiFeature };
  /** The web console's needs; undefined when it is switched off. */
  console: ConsoleDeps | undefined;
  /** The embeddable portal: its links always, its pages with the console. */
  portal: { links: PortalLinkDeps; pages: PortalPagesDeps | undefined };
}

/**
 * Every feature the API serves, in one list: each registers its own routes and describes them
 * (src/http-api/), so the server assembles routes and document from this alone.
 */
export function apiFeatures(p: ApiParts): ApiFeature[] {
  return [
    hooksFeature({ hooks: p.hooks, base: p.apiBase, hookStateView: p.hookStateView }),
    reportFeature(p.report),
    reloadFeature(p.reload),
    deliveriesFeature(p.deliveries),
    usersFeature(p.users),
    TAIL_FEATURE,
    LISTEN_FEATURE,
    p.operations.feature(p.apiBase),
    ...(p.console ? [consoleFeature(p.console)] : []),
    portalLinksFeature(p.portal.links),
    ...(p.portal.pages ? [portalPagesFeature(p.portal.pages)] : []),
  ];
}
