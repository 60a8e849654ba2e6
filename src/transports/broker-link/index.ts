// The public surface of transports/broker-link/: a shared, policy-checked, reconnecting broker
// connection that any message-broker transport builds on, and the URL helpers they share.
export { checkQueryKeys, escapeForBroker } from './escape.js';
export { LinkFailure } from './failure.js';
export { BrokerLink, type LinkSpec } from './link.js';
export { hostOf, resolveAllowed } from './resolve.js';
