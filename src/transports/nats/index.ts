// The public surface of transports/nats/: the NATS JetStream transport module (nats:).
import { brokerReceiverKey, describeBrokerUrl } from '../broker-link/index.js';
import { onFirstSend } from '../on-first-send.js';
import type { TransportModule } from '../transport.js';
import { checkNatsUrl, escapeSubjectValue, NATS_PORT } from './nats-url.js';

/** NATS JetStream: subject templated from the URL path, the stream's publish ack = delivered. */
export const natsTransport: TransportModule = {
  schemes: ['nats'],
  receiverKey: (url) => brokerReceiverKey(url, NATS_PORT),
  check: checkNatsUrl,
  escapeValue: escapeSubjectValue,
  describe: describeBrokerUrl,
  create: (ctx) =>
    onFirstSend(ctx, 'NATS', async () => (await import('./nats-transport.js')).createNatsTransport),
};
