/**
 * The `amqp:` / `amqps:` transport (RabbitMQ, AMQP 0-9-1 on amqplib): persistent, mandatory
 * publishes on a confirm channel. The publisher confirm is "delivered"; a returned (unroutable)
 * message or a nack is a retry; an exchange that does not exist, or a publish the broker forbids,
 * is a refusal. hookd never declares exchanges or queues: it publishes into what the operator made.
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
import { AmqpConnection, classifyConnectError, type PublishResult } from './connection.js';
import { type AmqpTarget, amqpReceiverKey, parseTarget, SHORTSTR_MAX } from './url.js';

function exchangeName(t: AmqpTarget): string {
  return t.exchange === '' ? '(default)' : t.exchange;
}

/** Headers as an AMQP table; a name given twice keeps both values, joined as HTTP would. */
function headerTable(flat: readonly string[]): Record<string, string> {
  const table: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = flat[i]!;
    const value = flat[i + 1]!;
    table[name] = table[name] === undefined ? value : `${table[name]}, ${value}`;
  }
  return table;
}

function outcomeOf(result: PublishResult, t: AmqpTarget): Omit<SendOutcome, 'latencyMs'> {
  const where = `exchange ${exchangeName(t)}, routing key ${t.routingKey}`;
  switch (result.kind) {
    case 'confirmed':
      return { kind: 'delivered', text: `confirmed by ${t.label}, ${where}` };
    case 'returned':
      return {
        kind: 'retry',
        text:
          `returned by ${t.label} as unroutable: no queue is bound to ${where} ` +
          `(${result.replyCode} ${result.replyText})`,
      };
    case 'nacked':
      return {
        kind: 'retry',
        text: `nacked by ${t.label}: the broker could not take the message (${where})`,
      };
    case 'channel-error':
      if (result.code === 404 && /no exchange/.test(result.serverText)) {
        return { kind: 'refused', text: `exchange ${exchangeName(t)} not found (404 NOT_FOUND)` };
      }
      if (result.code === 403) {
        return {
          kind: 'refused',
          text: `user ${t.username} may not publish to exchange ${exchangeName(t)} (403 ACCESS_REFUSED)`,
        };
      }
      return { kind: 'retry', text: `${t.label} closed the channel: ${result.serverText} (${result.code})` };
    case 'too-large':
      return {
        kind: 'refused',
        text: `the message's headers do not fit an AMQP header table: ${result.cause}`,
      };
    case 'lost':
      return {
        kind: 'retry',
        unreachable: true,
        text: `connection to ${t.label} lost before the broker confirmed the message: ${result.cause}`,
      };
  }
}

class AmqpTransport implements Transport {
  readonly #links: BrokerLinks<AmqpConnection>;
  readonly #attempts: Attempts;
  #closed = false;
  readonly #targets = new PreparedTargets<AmqpTarget, AmqpConnection>((u) => this.#prepare(u));

  constructor(private readonly ctx: TransportContext) {
    this.#links = new BrokerLinks(ctx);
    this.#attempts = new Attempts(ctx.timeoutMs);
  }

  #prepare(rendered: string): Prepared<AmqpTarget, AmqpConnection> {
    let url: URL;
    let t: AmqpTarget;
    try {
      url = new URL(rendered);
      t = parseTarget(url);
    } catch {
      return { refused: 'the rendered Callback is not a valid amqp: URL' };
    }
    for (const [name, value] of [
      ['exchange', t.exchange],
      ['routing key', t.routingKey],
    ] as const) {
      const bytes = Buffer.byteLength(value);
      if (bytes > SHORTSTR_MAX) {
        return { refused: `the rendered ${name} is ${bytes} bytes, over AMQP's limit of ${SHORTSTR_MAX}` };
      }
    }
    return { target: t, link: this.#link(url, t) };
  }

  send(attempt: TransportAttempt): Promise<SendOutcome> {
    let target: AmqpTarget | undefined;
    let link: BrokerLink<AmqpConnection> | undefined;
    return this.#attempts.run(
      (ms) => {
        const blocked = link?.current?.blocked;
        const why = blocked ? ` (the broker blocks publishers: ${blocked})` : '';
        return `no publisher confirm from ${target?.label ?? 'the broker'} within ${ms} ms${why}`;
      },
      async (live) => {
        if (this.#closed) return { kind: 'retry', aborted: true, text: 'the transport is closed' };
        const p = this.#targets.of(attempt.url);
        if ('refused' in p) return { kind: 'refused', text: p.refused };
        target = p.target;
        link = p.link;
        const t = p.target;
        const got = await connectFor(link, live);
        if ('verdict' in got) return got.verdict;
        const result = await got.conn.publish(
          t.exchange,
          t.routingKey,
          Buffer.from(attempt.body ?? '', 'utf8'),
          {
            messageId: attempt.id,
            ...(attempt.contentType ? { contentType: attempt.contentType } : {}),
            // AMQP timestamps are whole seconds.
            timestamp: Math.floor(attempt.sentAt / 1000),
            headers: headerTable(attempt.headers),
          },
        );
        return outcomeOf(result, t);
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

  /** One link per broker, credentials and vhost. */
  #link(url: URL, target: AmqpTarget): BrokerLink<AmqpConnection> {
    const receiverKey = amqpReceiverKey(url);
    return this.#links.link(receiverKey, target.password, () => ({
      receiverKey,
      label: target.label,
      host: target.host,
      open: (address, lost) => AmqpConnection.open(target, address, this.ctx.connectTimeoutMs, lost),
      classify: (err) => classifyConnectError(err, target),
      shut: (conn) => conn.close(),
    }));
  }
}

export function createAmqpTransport(ctx: TransportContext): Transport {
  return new AmqpTransport(ctx);
}
