/**
 * The contract between the HTTP server and the features that serve API routes: all a feature
 * imports to register its routes and describe them. The server consumes `ApiFeature`s and
 * imports no feature; features import nothing of src/server/ (docs/DECISIONS.md "Routes: one
 * way to register").
 */
export type { ApiFeature, OpenApiFragment, PathItem } from './feature.js';
export { errors, hookIdParam, json, problem } from './openapi-parts.js';
export { OWN_PREFIX, OWN_ROOT } from './own-prefix.js';
export { attachPrincipal, principalOf } from './principal.js';
export { type Problem, sendProblem, toProblem } from './problem.js';
export {
  allowedMethods,
  type RouteFlags,
  registeredResources,
  resource,
  websocketOnly,
} from './route-table.js';
