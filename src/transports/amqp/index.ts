// The public surface of transports/amqp/: the RabbitMQ (AMQP 0-9-1) transport module.
export { amqpTransport } from './transport.js';
export { AMQP_QUERY_KEYS, escapeAmqpValue } from './url.js';
