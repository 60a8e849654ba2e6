/**
 * The `redis:` transport (Redis Streams on node-redis): one `XADD` per attempt, the payload in
 * the field `body` and each header in a field of its own name, with `MAXLEN ~ N` when asked.
 * The entry id is the receipt. A key of another type is a refusal; so is a command the user's
 * ACL forbids.
 */
import {
  Attempts,
  type BrokerLink,
  BrokerLinks,
  connectFor,
  type Prepared,
  PreparedTargets,
} from '../broker-link/index.js';
import type { SendOutcome, Transport, TransportAttempt, TransportContext } from '../transport.js';
import { classifyConnectError, closeRedis, openRedis, type RedisConnection } from './connection.js';
import { parseTarget, RESERVED_FIELD, type RedisTarget, redisReceiverKey } from './url.js';

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
  readonly #links: BrokerLinks<RedisConnection>;
  readonly #attempts: Attempts;
  #closed = false;
  readonly #targets = new PreparedTargets<RedisTarget, RedisConnection>((u) => this.#prepare(u));

  constructor(private readonly ctx: TransportContext) {
    this.#links = new BrokerLinks(ctx);
    this.#attempts = new Attempts(ctx.timeoutMs);
  }

  #prepare(rendered: string): Prepared<RedisTarget, RedisConnection> {
    let url: URL;
    let target: RedisTarget;
    try {
      url = new URL(rendered);
      target = parseTarget(url);
    } catch {
      return { refused: 'the rendered Callback is not a valid redis: URL' };
    }
    if (target.stream === '') return { refused: 'the rendered stream key is empty' };
    return { target, link: this.#link(url, target) };
  }

  send(attempt: TransportAttempt): Promise<SendOutcome> {
    let label = 'the server';
    return this.#attempts.run(
      (ms) => `no answer from ${label} within ${ms} ms`,
      async (live) => {
        if (this.#closed) return { kind: 'retry', aborted: true, text: 'the transport is closed' };
        const p = this.#targets.of(attempt.url);
        if ('refused' in p) return { kind: 'refused', text: p.refused };
        const { target, link } = p;
        label = target.label;
        const args = ['XADD', target.stream];
        if (target.maxlen !== undefined) args.push('MAXLEN', '~', String(target.maxlen));
        args.push('*', RESERVED_FIELD, attempt.body ?? '', ...attempt.headers);
        const got = await connectFor(link, live);
        if ('verdict' in got) return got.verdict;
        const client = got.conn;
        try {
          const id = await client.sendCommand(args);
          return {
            kind: 'delivered',
            text: `added to stream ${target.stream} as ${String(id)} on ${target.label}`,
          };
        } catch (err) {
          return err instanceof Error
            ? replyOutcome(err, target, client)
            : { kind: 'retry', text: `${target.label} answered ${String(err)}` };
        }
      },
      attempt.signal,
    );
  }

  abortAll(): void {
    this.#attempts.abortAll();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.abortAll();
    await this.#links.close();
  }

  /** One link per server, credentials and database. */
  #link(url: URL, target: RedisTarget): BrokerLink<RedisConnection> {
    const receiverKey = redisReceiverKey(url);
    return this.#links.link(`${receiverKey}/${target.database}`, target.password ?? '', () => ({
      receiverKey,
      label: target.label,
      host: target.host,
      open: (address, lost) => openRedis(target, address, this.ctx.connectTimeoutMs, lost),
      classify: (err) => classifyConnectError(err, target),
      shut: closeRedis,
    }));
  }
}

export function createRedisTransport(ctx: TransportContext): Transport {
  return new RedisTransport(ctx);
}
