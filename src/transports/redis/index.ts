// The public surface of transports/redis/: the Redis Streams transport module, and the stream
// field the payload takes (a hook header of that name is refused at create).
import { describeBrokerUrl } from '../broker-link/index.js';
import { onFirstSend } from '../on-first-send.js';
import type { TransportModule } from '../transport.js';
import { checkRedis, escapeRedisValue, RESERVED_FIELD, redisReceiverKey } from './url.js';

export { escapeRedisValue, REDIS_QUERY_KEYS, RESERVED_FIELD } from './url.js';

/** The Redis Streams transport module: `redis://USER:PASS@HOST:PORT/DB?stream=KEY&maxlen=N`. */
export const redisTransport: TransportModule = {
  schemes: ['redis'],
  receiverKey: redisReceiverKey,
  check: checkRedis,
  escapeValue: escapeRedisValue,
  reservedHeaders: [RESERVED_FIELD],
  describe: describeBrokerUrl,
  create: (ctx) =>
    onFirstSend(ctx, 'Redis', async () => (await import('./transport.js')).createRedisTransport),
};
