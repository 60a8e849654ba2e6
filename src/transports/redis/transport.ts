/**
 * The `redis:` transport (Redis Streams on node-redis): one `XADD` per attempt, the payload in
 * the field `body` and each header in a field of its own name, with `MAXLEN ~ N` when asked.
 * The entry id is the receipt. A key of another type is a refusal; so is a command the user's
 * ACL forbids.
 */
import { createHash } from 'node:crypto';
import { BrokerLink, LinkFailure } from '../broker-link/index.js';
import type {
  SendOutcome,
  Transport,
  TransportAttempt,
  TransportContext,
  TransportModule,
} from '../transport.js';
import { classifyConnectError, closeRedis, openRedis, type RedisConnection } from './connection.js';
import {
  checkRedis,
  describeRedis,
  escapeRedisValue,
  parseTarget,
  RESERVED_FIELD,
  type RedisTarget,
  redisReceiverKey,
} from './url.js';

type Result = Omit<SendOutcome, 'latencyMs'>;

/** What a command's error reply means for the attempt. */
async function replyOutcome(err: Error, t: RedisTarget, client: RedisConnection): Promise<Result> {
  const code = err.message.split(' ')[0] ?? '';
  switch (code) {
    case 'WRONGTYPE': {
      const type = await client.sendCommand(['TYPE', t.stream]).catch(() => undefined);
      const what = typeof type === 'string' ? ` (it holds a ${type}, not a stream)` : '';
      return { kind: 'refused', text: `WRONGTYPE at key ${t.stream}${what}` };
    }
    case 'NOPERM':
      return { kind: 'refused', text: `user ${t.username} may not add to stream ${t.stream} (NOPERM)` };
    case 'OOM':
      return { kind: 'retry', text: `${t.label} is out of memory and takes no writes (OOM)` };
    case 'READONLY':
      return { kind: 'retry', text: `${t.label} is a read-only replica (READONLY)` };
    case 'LOADING':
      return { kind: 'retry', text: `${t.label} is loading its data set (LOADING)` };
    default:
      if (/^[A-Z]+$/.test(code)) return { kind: 'retry', text: `${t.label} answered ${err.message}` };
      return {
        kind: 'retry',
        unreachable: true,
        text: `connection to ${t.label} lost before the entry was added: ${err.message}`,
      };
  }
}

class RedisTransport implements Transport {
  readonly #links = new Map<string, BrokerLink<RedisConnection>>();
  readonly #inFlight = new Set<() => void>();
  #closed = false;

  constructor(private readonly ctx: TransportContext) {}

  async send(attempt: TransportAttempt): Promise<SendOutcome> {
    const started = performance.now();
    const finish = (o: Result): SendOutcome => ({ ...o, latencyMs: Math.round(performance.now() - started) });
    if (this.#closed) return finish({ kind: 'retry', aborted: true, text: 'the transport is closed' });
    let url: URL;
    let target: RedisTarget;
    try {
      url = new URL(attempt.url);
      target = parseTarget(url);
    } catch {
      return finish({ kind: 'refused', text: 'the rendered Callback is not a valid redis: URL' });
    }
    if (target.stream === '') return finish({ kind: 'refused', text: 'the rendered stream key is empty' });
    const args = ['XADD', target.stream];
    if (target.maxlen !== undefined) args.push('MAXLEN', '~', String(target.maxlen));
    args.push('*', RESERVED_FIELD, attempt.body ?? '', ...attempt.headers);

    return new Promise<SendOutcome>((resolve) => {
      let done = false;
      const settle = (o: Result) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.#inFlight.delete(abort);
        resolve(finish(o));
      };
      const abort = () => settle({ kind: 'retry', aborted: true, text: 'shutdown ended the attempt' });
      this.#inFlight.add(abort);
      const timer = setTimeout(
        () =>
          settle({
            kind: 'retry',
            timedOut: true,
            text: `no answer from ${target.label} within ${this.ctx.timeoutMs} ms`,
          }),
        this.ctx.timeoutMs,
      );
      this.#link(url, target)
        .get()
        .then(
          (client) =>
            client.sendCommand(args).then(
              (id): Result => ({
                kind: 'delivered',
                text: `added to stream ${target.stream} as ${String(id)} on ${target.label}`,
              }),
              (err: unknown): Result | Promise<Result> =>
                err instanceof Error
                  ? replyOutcome(err, target, client)
                  : { kind: 'retry', text: `${target.label} answered ${String(err)}` },
            ),
          failureOutcome,
        )
        .then(settle, (err: unknown) => settle(failureOutcome(err)));
    });
  }

  abortAll(): void {
    for (const abort of [...this.#inFlight]) abort();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.abortAll();
    const links = [...this.#links.values()];
    this.#links.clear();
    await Promise.all(links.map((l) => l.close()));
  }

  /** One link per server, credentials and database; the password only ever as a hash in the key. */
  #link(url: URL, target: RedisTarget): BrokerLink<RedisConnection> {
    const receiverKey = redisReceiverKey(url);
    const secret = createHash('sha256')
      .update(target.password ?? '')
      .digest('base64');
    const key = `${receiverKey}/${target.database}\n${secret}`;
    let link = this.#links.get(key);
    if (!link) {
      link = new BrokerLink<RedisConnection>(
        {
          receiverKey,
          label: target.label,
          host: target.host,
          open: (address, lost) => openRedis(target, address, this.ctx.connectTimeoutMs, lost),
          classify: (err) => classifyConnectError(err, target),
          shut: closeRedis,
        },
        this.ctx,
      );
      this.#links.set(key, link);
    }
    return link;
  }
}

function failureOutcome(err: unknown): Result {
  if (err instanceof LinkFailure) {
    // As for HTTP: nothing was sent; the retry policy decides whether to try again.
    if (err.kind === 'denied') return { kind: 'refused', denied: true, text: err.message };
    if (err.kind === 'refused') return { kind: 'refused', text: err.message };
    return { kind: 'retry', unreachable: true, text: err.message };
  }
  return { kind: 'retry', text: `add failed: ${err instanceof Error ? err.message : String(err)}` };
}

/** The Redis Streams transport module: `redis://USER:PASS@HOST:PORT/DB?stream=KEY&maxlen=N`. */
export const redisTransport: TransportModule = {
  schemes: ['redis'],
  receiverKey: redisReceiverKey,
  check: checkRedis,
  escapeValue: escapeRedisValue,
  reservedHeaders: [RESERVED_FIELD],
  describe: describeRedis,
  create: (ctx) => new RedisTransport(ctx),
};
