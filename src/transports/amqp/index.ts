// The public surface of transports/amqp/: the RabbitMQ (AMQP 0-9-1) transport module.
import { describeBrokerUrl } from '../broker-link/index.js';
import { onFirstSend } from '../on-first-send.js';
import type { TransportModule } from '../transport.js';
import { amqpReceiverKey, checkAmqp, escapeAmqpValue } from './url.js';

export { AMQP_QUERY_KEYS, escapeAmqpValue } from './url.js';

/** The RabbitMQ transport module: `amqp://USER:PASS@HOST:PORT/VHOST?exchange=NAME&routing_key=KEY`. */
export const amqpTransport: TransportModule = {
  schemes: ['amqp', 'amqps'],
  receiverKey: amqpReceiverKey,
  check: checkAmqp,
  escapeValue: escapeAmqpValue,
  describe: describeBrokerUrl,
  create: (ctx) => onFirstSend(ctx, 'AMQP', async () => (await import('./transport.js')).createAmqpTransport),
};
