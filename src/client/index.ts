/**
 * hookd/client: a typed client of hookd's API, its types generated from the OpenAPI document the
 * daemon serves (openapi-types.ts). It imports nothing of the daemon: a service's back end
 * installs it without running hookd.
 */
export type { DeliveryListOptions } from './deliveries.js';
export { HookdClient } from './hookd-client.js';
export { HookdError } from './hookd-error.js';
export { MAX_PAGE } from './hooks.js';
export { type Answer, type HookdClientOptions, nextLink, type TokenSource } from './http.js';
export type { components, operations, paths } from './openapi-types.js';
export { TAIL_BACKOFF, type TailOptions, tailUrl } from './tail.js';
export type * from './types.js';
