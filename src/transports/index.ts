// The public surface of transports/: the seam, the registry and the built-in transports.

export { mqttTransport } from './mqtt/index.js';
export { natsTransport } from './nats/index.js';
export { builtinTransports, TransportRegistry } from './registry.js';
export type {
  SendOutcome,
  Transport,
  TransportAttempt,
  TransportContext,
  TransportModule,
} from './transport.js';
