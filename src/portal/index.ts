/**
 * The embeddable portal (docs/API.md "Embeddable portal"): one-time links a service's back end
 * makes for its users (`POST /_hookd/portal-links`), and the pages those links sign in to — the
 * console's pages of one user's own world, framable by the operator's origins, in the service's
 * look, telling the embedding page what happened.
 */
export { type Brand, loadBrandFile } from './brand.js';
export { type PortalLinkDeps, portalLinksFeature } from './link-api.js';
export { PortalLinks } from './links.js';
export { PORTAL_PATH, type PortalPagesDeps, portalPagesFeature } from './pages.js';
