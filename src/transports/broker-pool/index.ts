// The public surface of transports/broker-pool/: what the broker transports share (one connection
// per broker and credentials, the address policy before a connect, the time limit, the URL bits).
export { Attempts } from './attempts.js';
export { BrokerPool, type Connector, Link, type LinkAnswer, type Verdict } from './link.js';
export {
  type BrokerTarget,
  brokerReceiverKey,
  brokerTarget,
  describeBrokerUrl,
  hostOf,
  hostPort,
  percentEscape,
  safeDecode,
} from './target.js';
