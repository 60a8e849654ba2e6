// The public surface of transports/: the seam, the registry and the built-in transports.

export { amqpTransport } from './amqp/index.js';
export {
  callbackHeaderCheck,
  callbackSchemeCheck,
  DEFAULT_CALLBACK_SCHEMES,
  defaultCallbackSchemes,
  schemeProblem,
} from './callback-schemes.js';
export { HttpTransport, httpTransport } from './http/http-transport.js';
export { createPinnedDispatcher } from './http/pinned-dispatcher.js';
export { mqttTransport } from './mqtt/index.js';
export { natsTransport } from './nats/index.js';
export { redisTransport } from './redis/index.js';
export { builtinTransports, TransportRegistry } from './registry.js';
export type {
  AttemptSender,
  PreflightAnswer,
  PreflightRequest,
  SenderContext,
  SenderSource,
  SendOutcome,
  Transport,
  TransportAttempt,
  TransportContext,
  TransportModule,
} from './transport.js';
export { TransportSet } from './transport-set.js';
