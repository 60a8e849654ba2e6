// The public surface of transports/redis/: the Redis Streams transport module, and the stream
// field the payload takes (a hook header of that name is refused at create).
export { redisTransport } from './transport.js';
export { escapeRedisValue, REDIS_QUERY_KEYS, RESERVED_FIELD } from './url.js';
