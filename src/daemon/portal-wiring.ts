import type { FastifyRequest } from 'fastify';
import type { HookdConfig } from '../config/index.js';
import type { ConsoleDeps } from '../console/index.js';
import { loadBrandFile, type PortalLinkDeps, PortalLinks, type PortalPagesDeps } from '../portal/index.js';
import type { OpenedStores } from './open-store.js';

/**
 * The embeddable portal's parts: its links in the cluster's (or the SQLite file's) idempotency
 * table, the operator's brand file read once at start (a bad one stops the start, naming the
 * field), and its pages beside the console's, with the console's services.
 */
export function portalParts(
  config: HookdConfig,
  opened: OpenedStores,
  consoleDeps: ConsoleDeps | undefined,
  consoleUrl: () => string,
): { links: PortalLinkDeps; pages: PortalPagesDeps | undefined } {
  const brand = loadBrandFile(config.portalBrandFile);
  const links = new PortalLinks(opened.idempotency);
  const portalOrigin = (req: FastifyRequest): string | undefined => {
    if (!consoleDeps) return undefined;
    if (config.portalBaseUrl) return config.portalBaseUrl;
    const own = consoleUrl();
    if (own) return own;
    if (config.consoleOnProxy) return config.publicBaseUrl ?? consoleDeps.reportBase(req);
    return undefined;
  };
  return {
    links: { links, users: opened.store, brand, portalOrigin, base: config.apiBase },
    pages: consoleDeps && {
      ...pagesOf(consoleDeps),
      users: opened.store,
      links,
      frameAncestors: config.portalFrameAncestors,
      brand,
    },
  };
}

/** What the portal's pages take of the console's services (not its sessions, users or identity). */
function pagesOf(c: ConsoleDeps) {
  const { base, hooks, pipeline, engine, deliveryStores, trustsProxy, reportBase, tail } = c;
  return {
    ...{ base, hooks, pipeline, engine, deliveryStores, trustsProxy, reportBase },
    ...(tail && { tail }),
    ...(c.hookStateView && { hookStateView: c.hookStateView }),
    ...(c.notificationEndpoints && { notificationEndpoints: c.notificationEndpoints }),
    ...(c.servedHere && { servedHere: c.servedHere }),
  };
}
