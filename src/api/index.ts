/**
 * The management API's own features (hooks, deliveries, users, report, reload, the tail's
 * endpoint), each an `ApiFeature` with its OpenAPI fragment, and the presenters other features
 * show hooks and deliveries with. The daemon lists them; the server knows none of them.
 */
export { type DeliveryRouteDeps, deliveriesFeature, presentDelivery } from './deliveries.js';
export { hooksFeature } from './hooks.js';
export { type HookStateView, presentHook, withLastFilterError } from './present-hook.js';
export { type Reloadable, reloadFeature } from './reload.js';
export { type ReportApiParts, reportFeature } from './report.js';
export { contentOf } from './served-content.js';
export { TAIL_FEATURE } from './tail-route.js';
export { type UserRouteDeps, usersFeature } from './users.js';
