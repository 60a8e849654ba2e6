import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Channel, type ChannelModel, type ConsumeMessage, connect } from 'amqplib';
import { Webhook } from 'standardwebhooks';
import { AddressPolicy } from '../../src/policy/index.js';
import { amqpTransport } from '../../src/transports/amqp/index.js';
import type { SendOutcome, Transport } from '../../src/transports/index.js';
import { startTcpRelay } from '../helpers/tcp-relay.js';
import {
  brokerMissing,
  recordingContext,
  SECRET,
  signedAttempt,
  uniqueName,
} from '../helpers/transport-kit.js';
import { until } from '../helpers/until.js';

const BROKER = 'amqp://guest:guest@127.0.0.1:5672';
const skip = await brokerMissing('RabbitMQ', 5672);

/** A consumer on a queue of its own, bound as asked; cleaned up by `after`. */
interface Consumer {
  readonly queue: string;
  readonly messages: ConsumeMessage[];
}

describe('amqp transport against RabbitMQ', { skip }, () => {
  let admin: ChannelModel;
  let ch: Channel;
  const queues: string[] = [];
  const exchanges: string[] = [];
  const transports: Transport[] = [];

  before(async () => {
    admin = await connect(BROKER);
    ch = await admin.createChannel();
  });

  after(async () => {
    await Promise.all(transports.map((t) => t.close()));
    for (const q of queues) await ch.deleteQueue(q);
    for (const x of exchanges) await ch.deleteExchange(x);
    await admin.close();
  });

  async function consumer(bind?: { exchange: string; key: string }): Promise<Consumer> {
    const queue = uniqueName('hookd-q');
    await ch.assertQueue(queue, { durable: false, autoDelete: false });
    queues.push(queue);
    if (bind) await ch.bindQueue(queue, bind.exchange, bind.key);
    const messages: ConsumeMessage[] = [];
    await ch.consume(queue, (m) => m && messages.push(m), { noAck: true });
    return { queue, messages };
  }

  async function topicExchange(): Promise<string> {
    const name = uniqueName('ts.events');
    await ch.assertExchange(name, 'topic', { durable: false });
    exchanges.push(name);
    return name;
  }

  function transport(over: Parameters<typeof recordingContext>[0] = {}) {
    const rec = recordingContext(over);
    const t = amqpTransport.create(rec.ctx);
    transports.push(t);
    return { t, ...rec };
  }

  it('publishes to a queue through the default exchange; payload, headers and signatures arrive', async () => {
    const c = await consumer();
    const { t } = transport();
    const body = JSON.stringify({ path: '/repositories/r1/timeseries/ts1' });
    const attempt = signedAttempt(`${BROKER}/%2F?routing_key=${c.queue}`, body, ['x-tenant', 'acme']);
    const outcome = await t.send(attempt);
    assert.equal(outcome.kind, 'delivered', outcome.text);
    assert.equal(outcome.text, `confirmed by 127.0.0.1:5672, exchange (default), routing key ${c.queue}`);
    const [m] = await until('the message', () => (c.messages.length ? c.messages : undefined));
    assert.ok(m);
    assert.equal(m.content.toString(), body);
    assert.equal(m.properties.messageId, attempt.id);
    assert.equal(m.properties.contentType, 'application/json');
    assert.equal(m.properties.deliveryMode, 2);
    assert.equal(m.properties.timestamp, Math.floor(attempt.sentAt / 1000));
    const headers = Object.fromEntries(
      Object.entries(m.properties.headers ?? {}).map(([k, v]) => [k, String(v)]),
    );
    assert.equal(headers['x-tenant'], 'acme');
    assert.deepEqual(new Webhook(SECRET).verify(m.content.toString(), headers), JSON.parse(body));
  });

  it('publishes to a topic exchange with the routing key; the receipt names both', async () => {
    const x = await topicExchange();
    const c = await consumer({ exchange: x, key: 'ts.*' });
    const { t } = transport();
    const outcome = await t.send(signedAttempt(`${BROKER}?exchange=${x}&routing_key=ts.ts1`, '{"n":1}'));
    assert.equal(outcome.kind, 'delivered', outcome.text);
    assert.equal(outcome.text, `confirmed by 127.0.0.1:5672, exchange ${x}, routing key ts.ts1`);
    await until('the message', () => c.messages.length === 1);
    assert.equal(c.messages[0]!.fields.routingKey, 'ts.ts1');
  });

  it('refuses an exchange that does not exist by name, and keeps working on a new channel', async () => {
    const c = await consumer();
    const { t } = transport();
    const missing = uniqueName('ts.missing');
    const outcome = await t.send(signedAttempt(`${BROKER}?exchange=${missing}&routing_key=k`, '{}'));
    assert.equal(outcome.kind, 'refused');
    assert.equal(outcome.text, `exchange ${missing} not found (404 NOT_FOUND)`);
    const next = await t.send(signedAttempt(`${BROKER}?routing_key=${c.queue}`, '{"after":true}'));
    assert.equal(next.kind, 'delivered', next.text);
    await until('the message after the refusal', () => c.messages.length === 1);
  });

  it('retries an unroutable message (mandatory, returned), naming why', async () => {
    const x = await topicExchange();
    const { t } = transport();
    const outcome = await t.send(signedAttempt(`${BROKER}?exchange=${x}&routing_key=nobody.listens`, '{}'));
    assert.equal(outcome.kind, 'retry');
    assert.equal(
      outcome.text,
      `returned by 127.0.0.1:5672 as unroutable: no queue is bound to exchange ${x}, routing key nobody.listens (312 NO_ROUTE)`,
    );
  });

  it('refuses headers too large for an AMQP header table, and keeps the channel', async () => {
    const c = await consumer();
    const { t } = transport();
    const big = await t.send(
      signedAttempt(`${BROKER}?routing_key=${c.queue}`, '{}', ['x-big', 'x'.repeat(70_000)]),
    );
    assert.equal(big.kind, 'refused');
    assert.match(big.text, /^the message's headers do not fit an AMQP header table/);
    assert.equal((await t.send(signedAttempt(`${BROKER}?routing_key=${c.queue}`, '{}'))).kind, 'delivered');
    await until('the message after the refusal', () => c.messages.length === 1);
  });

  it('names wrong credentials and an unknown vhost, with no password in the text, and does not crash', async () => {
    const c = await consumer();
    const { t } = transport();
    const bad = await t.send(signedAttempt(`amqp://guest:s3cr3t-wrong@127.0.0.1:5672?routing_key=q`, '{}'));
    assert.equal(bad.kind, 'refused');
    assert.equal(bad.text, 'login refused by 127.0.0.1:5672 for user guest (403 ACCESS_REFUSED)');
    const vhost = await t.send(signedAttempt(`${BROKER}/no-such-vhost?routing_key=q`, '{}'));
    assert.equal(vhost.kind, 'refused');
    assert.match(vhost.text, /refused vhost no-such-vhost for user guest: .*530 NOT_ALLOWED/);
    for (const o of [bad, vhost]) assert.doesNotMatch(o.text, /s3cr3t|guest:guest/);
    // The right password gets a connection of its own, not the refused one.
    const good = await t.send(signedAttempt(`${BROKER}?routing_key=${c.queue}`, '{}'));
    assert.equal(good.kind, 'delivered', good.text);
  });

  it('refuses a denied address without connecting', async () => {
    const relay = await startTcpRelay('127.0.0.1', 5672);
    try {
      const { t } = transport({ policy: new AddressPolicy() });
      const outcome = await t.send(
        signedAttempt(`amqp://guest:guest@127.0.0.1:${relay.port}?routing_key=q`, '{}'),
      );
      assert.equal(outcome.kind, 'refused');
      assert.equal(outcome.denied, true);
      assert.match(outcome.text, /127\.0\.0\.1, which is loopback .*--allow-callback-net 127\.0\.0\.0\/8/);
      assert.equal(relay.accepted, 0);
      const named = transport({ policy: new AddressPolicy(), lookup: async () => ['10.1.2.3'] });
      const byName = await named.t.send(
        signedAttempt('amqp://guest:guest@broker.internal?routing_key=q', '{}'),
      );
      assert.equal(byName.denied, true);
      // The owner reads the delivery log: the rule, never where the name points.
      assert.match(
        byName.text,
        /broker host broker\.internal resolves to an address the callback policy refuses/,
      );
      assert.doesNotMatch(byName.text, /10\.1\.2\.3/);
    } finally {
      await relay.close();
    }
  });

  it('gives retries while the broker is cut off mid-burst, reconnects, tells onReconnect, then delivers', async () => {
    const relay = await startTcpRelay('127.0.0.1', 5672);
    const c = await consumer();
    const { t, reconnects } = transport();
    const url = `amqp://guest:guest@127.0.0.1:${relay.port}?routing_key=${c.queue}`;
    const outcomes: SendOutcome[] = [];
    const pending: string[] = [];
    try {
      for (let i = 0; i < 40; i++) {
        if (i === 20) relay.cut();
        const o = await t.send(signedAttempt(url, JSON.stringify({ i })));
        outcomes.push(o);
        if (o.kind !== 'delivered') pending.push(JSON.stringify({ i }));
      }
      assert.equal(outcomes.slice(0, 20).filter((o) => o.kind === 'delivered').length, 20);
      const cut = outcomes.slice(20);
      assert.ok(
        cut.every((o) => o.kind === 'retry' && o.unreachable),
        JSON.stringify(cut[0]),
      );
      assert.equal(reconnects.length, 0);
      relay.restore();
      await until('onReconnect', () => reconnects.length > 0);
      assert.equal(reconnects[0], `amqp://guest@127.0.0.1:${relay.port}/%2F`);
      for (const body of pending) {
        const o = await t.send(signedAttempt(url, body));
        assert.equal(o.kind, 'delivered', o.text);
      }
      await until('every message', () => c.messages.length >= 40);
      const seen = new Set(c.messages.map((m) => JSON.parse(m.content.toString()).i as number));
      assert.equal(seen.size, 40);
    } finally {
      await relay.close();
    }
  });

  it('answers aborted for attempts in flight at abortAll, and close() ends the connections', async () => {
    const relay = await startTcpRelay('127.0.0.1', 5672);
    try {
      const { t } = transport();
      const c = await consumer();
      const url = `amqp://guest:guest@127.0.0.1:${relay.port}?routing_key=${c.queue}`;
      assert.equal((await t.send(signedAttempt(url, '{}'))).kind, 'delivered');
      const inFlight = t.send(signedAttempt(url, '{}'));
      t.abortAll();
      const o = await inFlight;
      assert.equal(o.aborted, true);
      await t.close();
      const after = await t.send(signedAttempt(url, '{}'));
      assert.equal(after.aborted, true);
      assert.equal(relay.accepted, 1);
    } finally {
      await relay.close();
    }
  });
});

describe('amqp transport: keys, checks and descriptions', () => {
  const u = (s: string) => new URL(s);

  it('keys a receiver by scheme, user, host, port and vhost, never the password', () => {
    assert.equal(
      amqpTransport.receiverKey(u('amqp://bob:pw@Broker.example:5672/%2F?exchange=x&routing_key=a')),
      'amqp://bob@broker.example:5672/%2F',
    );
    assert.equal(
      amqpTransport.receiverKey(u('amqps://bob:pw@h/prod?routing_key=q')),
      'amqps://bob@h:5671/prod',
    );
    assert.equal(amqpTransport.receiverKey(u('amqp://h?routing_key=q')), 'amqp://guest@h:5672/%2F');
    assert.notEqual(
      amqpTransport.receiverKey(u('amqp://bob:pw@h/a?routing_key=q')),
      amqpTransport.receiverKey(u('amqp://bob:pw@h/b?routing_key=q')),
    );
    assert.equal(
      amqpTransport.receiverKey(u('amqp://bob:one@h?routing_key=q')),
      amqpTransport.receiverKey(u('amqp://bob:two@h?routing_key=q')),
    );
  });

  it('describes a target without its password', () => {
    const d = amqpTransport.describe(u('amqp://bob:s3cr3t@h:5672/%2F?exchange=ts.events&routing_key=ts.$1'));
    assert.equal(d, 'amqp://bob@h:5672/%2F?exchange=ts.events&routing_key=ts.$1');
  });

  it('accepts the documented shapes, templates included', () => {
    for (const s of [
      'amqp://guest:guest@127.0.0.1:5672/%2F?exchange=ts.events&routing_key=ts.$1',
      'amqp://127.0.0.1?routing_key=queue-$1',
      'amqps://u:p@h/vh?exchange=fan',
      'amqp://h/?exchange=x&routing_key=${REQUEST_METHOD}.$2',
    ]) {
      assert.equal(amqpTransport.check(u(s)), undefined, s);
    }
  });

  it('names the rule of a malformed URL, with the closest valid key', () => {
    assert.equal(
      amqpTransport.check(u('amqp://h?exchange=x&routng_key=a')),
      'the amqp: URL has an unknown query parameter "routng_key"; did you mean "routing_key"? (known: exchange, routing_key)',
    );
    assert.match(amqpTransport.check(u('amqp://h?routing_key=a&routing_key=b')) ?? '', /"routing_key" twice/);
    assert.match(
      amqpTransport.check(u('amqp://h/a/b?routing_key=q')) ?? '',
      /one segment: write a \/ inside it as %2F/,
    );
    assert.match(amqpTransport.check(u('amqp://h')) ?? '', /needs routing_key .* default exchange/);
    assert.match(amqpTransport.check(u('amqp://h?exchange=&routing_key=q')) ?? '', /empty exchange/);
    assert.match(
      amqpTransport.check(u(`amqp://h?routing_key=${'k'.repeat(256)}`)) ?? '',
      /256 bytes, over AMQP's limit of 255/,
    );
    assert.match(amqpTransport.check(u('amqp://h?routing_key=q#frag')) ?? '', /no #fragment/);
  });

  it('escapes a template value so it stays one word of the routing key', () => {
    const esc = amqpTransport.escapeValue!;
    const fill = (v: string) =>
      new URL(`amqp://h?routing_key=ts.${esc(v)}.read`).searchParams.get('routing_key');
    assert.equal(fill('ts1'), 'ts.ts1.read');
    assert.equal(fill('a.b'), 'ts.a%2Eb.read');
    assert.equal(fill('*'), 'ts.%2A.read');
    assert.equal(fill('#'), 'ts.%23.read');
    assert.equal(fill('a b\tc'), 'ts.a%20b%09c.read');
    assert.equal(fill('50%'), 'ts.50%25.read');
    assert.equal(fill('x&routing_key=evil'), 'ts.x&routing_key=evil.read');
    assert.equal(fill('ünï/+'), 'ts.ünï/+.read');
    assert.equal(decodeURIComponent(fill('a.b *#%')!.split('.')[1]!), 'a.b *#%');
  });
});
