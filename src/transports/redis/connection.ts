/**
 * One node-redis client per server, user and database. Its own reconnection is off: the broker
 * link reconnects, so that every new connection resolves the host again and passes the address
 * policy.
 */
import { createClient } from 'redis';
import { LinkFailure } from '../broker-link/index.js';
import type { RedisTarget } from './url.js';

function makeClient(target: RedisTarget, address: string, connectTimeoutMs: number) {
  return createClient({
    socket: { host: address, port: target.port, connectTimeout: connectTimeoutMs, reconnectStrategy: false },
    ...(target.password === undefined ? {} : { username: target.username, password: target.password }),
    database: target.database,
    disableOfflineQueue: true,
  });
}

export type RedisConnection = ReturnType<typeof makeClient>;

export async function openRedis(
  target: RedisTarget,
  address: string,
  connectTimeoutMs: number,
  lost: (cause: string) => void,
): Promise<RedisConnection> {
  const client = makeClient(target, address, connectTimeoutMs);
  let lastError = 'closed';
  let opened = false;
  let told = false;
  const tell = () => {
    if (!opened || told || client.isOpen) return;
    told = true;
    lost(lastError);
  };
  // With its own reconnection off, node-redis reports a dropped socket as an `error` after which
  // the client is no longer open (and not always an `end`).
  client.on('error', (err: Error) => {
    lastError = err.message;
    setImmediate(tell);
  });
  client.on('end', tell);
  try {
    await client.connect();
  } catch (err) {
    client.destroy();
    throw err;
  }
  opened = true;
  return client;
}

/** Closes a client without telling the link it was lost. */
export async function closeRedis(client: RedisConnection): Promise<void> {
  client.removeAllListeners('end');
  client.removeAllListeners('error');
  client.on('error', () => undefined);
  if (client.isReady) await client.close().catch(() => client.destroy());
  else if (client.isOpen) client.destroy();
}

/** Names a connect error: a server that answered no is `refused`; anything else `unreachable`. */
export function classifyConnectError(err: unknown, target: RedisTarget): LinkFailure {
  const message = err instanceof Error ? err.message : String(err);
  if (/^WRONGPASS|^NOAUTH|^ERR invalid password|^ERR AUTH/.test(message)) {
    const code = message.split(' ')[0];
    return new LinkFailure(
      'refused',
      `login refused by ${target.label} for user ${target.username} (${code})`,
    );
  }
  if (/DB index is out of range/.test(message)) {
    return new LinkFailure(
      'refused',
      `${target.label} has no database ${target.database} (ERR DB index is out of range)`,
    );
  }
  if (/^NOPERM/.test(message)) {
    return new LinkFailure(
      'refused',
      `user ${target.username} may not use database ${target.database} on ${target.label} (NOPERM)`,
    );
  }
  const code = (err as NodeJS.ErrnoException).code;
  return new LinkFailure(
    'unreachable',
    `cannot connect to ${target.label}${code ? ` (${code})` : `: ${message}`}`,
  );
}
