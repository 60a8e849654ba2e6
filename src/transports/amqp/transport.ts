/**
 * The `amqp:` / `amqps:` transport (RabbitMQ, AMQP 0-9-1 on amqplib): persistent, mandatory
 * publishes on a confirm channel. The publisher confirm is "delivered"; a returned (unroutable)
 * message or a nack is a retry; an exchange that does not exist, or a publish the broker forbids,
 * is a refusal. hookd never declares exchanges or queues: it publishes into what the operator made.
 */
import { type BrokerLink, BrokerLinks, describeBrokerUrl, failureVerdict } from '../broker-link/index.js';
import type {
  SendOutcome,
  Transport,
  TransportAttempt,
  TransportContext,
  TransportModule,
} from '../transport.js';
import { AmqpConnection, classifyConnectError, type PublishResult } from './connection.js';
import {
  type AmqpTarget,
  amqpReceiverKey,
  checkAmqp,
  escapeAmqpValue,
  parseTarget,
  SHORTSTR_MAX,
} from './url.js';

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
  readonly #inFlight = new Set<() => void>();
  #closed = false;

  constructor(private readonly ctx: TransportContext) {
    this.#links = new BrokerLinks(ctx);
  }

  async send(attempt: TransportAttempt): Promise<SendOutcome> {
    const started = performance.now();
    const finish = (o: Omit<SendOutcome, 'latencyMs'>): SendOutcome => ({
      ...o,
      latencyMs: Math.round(performance.now() - started),
    });
    if (this.#closed) return finish({ kind: 'retry', aborted: true, text: 'the transport is closed' });
    let url: URL;
    let target: AmqpTarget;
    try {
      url = new URL(attempt.url);
      target = parseTarget(url);
    } catch {
      return finish({ kind: 'refused', text: 'the rendered Callback is not a valid amqp: URL' });
    }
    for (const [name, value] of [
      ['exchange', target.exchange],
      ['routing key', target.routingKey],
    ] as const) {
      const bytes = Buffer.byteLength(value);
      if (bytes > SHORTSTR_MAX) {
        return finish({
          kind: 'refused',
          text: `the rendered ${name} is ${bytes} bytes, over AMQP's limit of ${SHORTSTR_MAX}`,
        });
      }
    }

    return new Promise<SendOutcome>((resolve) => {
      let done = false;
      const settle = (o: Omit<SendOutcome, 'latencyMs'>) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.#inFlight.delete(abort);
        resolve(finish(o));
      };
      const abort = () => settle({ kind: 'retry', aborted: true, text: 'shutdown ended the attempt' });
      this.#inFlight.add(abort);
      const timer = setTimeout(() => {
        const conn = link.current;
        const why = conn?.blocked ? ` (the broker blocks publishers: ${conn.blocked})` : '';
        settle({
          kind: 'retry',
          timedOut: true,
          text: `no publisher confirm from ${target.label} within ${this.ctx.timeoutMs} ms${why}`,
        });
      }, this.ctx.timeoutMs);
      const link = this.#link(url, target);
      link
        .get()
        .then((conn) =>
          conn.publish(target.exchange, target.routingKey, Buffer.from(attempt.body ?? '', 'utf8'), {
            messageId: attempt.id,
            ...(attempt.contentType ? { contentType: attempt.contentType } : {}),
            // AMQP timestamps are whole seconds.
            timestamp: Math.floor(attempt.sentAt / 1000),
            headers: headerTable(attempt.headers),
          }),
        )
        .then(
          (result) => settle(outcomeOf(result, target)),
          (err: unknown) => settle(failureOutcome(err)),
        );
    });
  }

  abortAll(): void {
    for (const abort of [...this.#inFlight]) abort();
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
      nameDenial: 'address',
      open: (address, lost) => AmqpConnection.open(target, address, this.ctx.connectTimeoutMs, lost),
      classify: (err) => classifyConnectError(err, target),
      shut: (conn) => conn.close(),
    }));
  }
}

function failureOutcome(err: unknown): Omit<SendOutcome, 'latencyMs'> {
  return failureVerdict(err, (message) => ({ kind: 'retry', text: `publish failed: ${message}` }));
}

/** The RabbitMQ transport module: `amqp://USER:PASS@HOST:PORT/VHOST?exchange=NAME&routing_key=KEY`. */
export const amqpTransport: TransportModule = {
  schemes: ['amqp', 'amqps'],
  receiverKey: amqpReceiverKey,
  check: checkAmqp,
  escapeValue: escapeAmqpValue,
  describe: describeBrokerUrl,
  create: (ctx) => new AmqpTransport(ctx),
};
