// The public surface of transports/broker-link/: what every message-broker transport shares (one
// policy-checked, reconnecting connection per broker and credentials, the attempt's time limit,
// the URL helpers and value escaping).
export { Attempts } from './attempts.js';
export { LinkFailure, type Verdict } from './failure.js';
export { BrokerLink, type LinkSpec } from './link.js';
export { BrokerLinks, connectFor } from './links.js';
export { type Prepared, PreparedTargets } from './prepared.js';
export {
  type BrokerTarget,
  brokerReceiverKey,
  brokerTarget,
  checkQueryKeys,
  describeBrokerUrl,
  escapeForBroker,
  hostOf,
  hostPort,
  safeDecode,
} from './target.js';
