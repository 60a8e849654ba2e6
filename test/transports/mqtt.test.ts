import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { Webhook } from 'standardwebhooks';
import { AddressPolicy } from '../../src/policy/index.js';
import { mqttTransport, type SendOutcome } from '../../src/transports/index.js';
import { skipReason } from '../helpers/require.js';
import { startTcpRelay } from '../helpers/tcp-relay.js';
import {
  brokerMissing,
  haveProgram,
  recordingContext,
  SECRET,
  signedAttempt,
  startPrivateMosquitto,
  uniqueName,
} from '../helpers/transport-kit.js';
import { until } from '../helpers/until.js';

const BROKER = 'mqtt://127.0.0.1:1883';
const skip = await brokerMissing('Mosquitto', 1883);

interface Got {
  topic: string;
  payload: string;
  contentType: string | undefined;
  props: Record<string, string | string[]>;
}

/** An MQTT 5 subscriber on the shared broker recording what arrives on `filter`. */
async function subscriber(filter: string): Promise<{ got: Got[]; client: MqttClient }> {
  const client = await mqtt.connectAsync(BROKER, { protocolVersion: 5, reconnectPeriod: 0 });
  const got: Got[] = [];
  client.on('message', (topic, payload, packet) => {
    got.push({
      topic,
      payload: payload.toString('utf8'),
      contentType: packet.properties?.contentType,
      props: (packet.properties?.userProperties ?? {}) as Record<string, string | string[]>,
    });
  });
  await client.subscribeAsync(filter, { qos: 1 });
  return { got, client };
}

const one = (v: string | string[] | undefined): string => (Array.isArray(v) ? v[0]! : (v ?? ''));

describe('the MQTT module without a broker', () => {
  const u = (s: string) => new URL(s);

  it('keys a receiver by scheme, host, port and user, never the password', () => {
    assert.equal(
      mqttTransport.receiverKey(u('mqtt://alice:s3cret@Broker.example:1883/a/b')),
      'mqtt://alice@broker.example:1883',
    );
    assert.equal(mqttTransport.receiverKey(u('mqtt://127.0.0.1/a')), 'mqtt://127.0.0.1:1883');
    assert.equal(mqttTransport.receiverKey(u('mqtts://bob:pw@[::1]/a')), 'mqtts://bob@[::1]:8883');
    assert.notEqual(
      mqttTransport.receiverKey(u('mqtt://alice@h:1883/a')),
      mqttTransport.receiverKey(u('mqtt://bob@h:1883/a')),
    );
  });

  it('describes a target without its password', () => {
    const d = mqttTransport.describe(u('mqtt://alice:s3cret@127.0.0.1:1883/ts/$1/read?qos=2'));
    assert.equal(d, 'mqtt://alice@127.0.0.1:1883/ts/$1/read?qos=2');
    assert.ok(!d.includes('s3cret'));
  });

  it('accepts well-formed Callbacks', () => {
    for (const ok of [
      'mqtt://127.0.0.1:1883/ts/$1/read',
      'mqtts://u:p@broker.example/ts/x',
      'mqtt://h/a?qos=0&retain=true',
      'mqtt://h/$REQUEST_PATH/x',
      'mqtt://h/${1}/x',
    ]) {
      assert.equal(mqttTransport.check(u(ok)), undefined, ok);
    }
  });

  it("refuses wildcards, an empty topic, bad options and the broker's own topics, naming the rule (the caller names Callback)", () => {
    const cases: [string, RegExp][] = [
      ['mqtt://h/ts/#', /wildcard "#"/],
      ['mqtt://h/ts/%23/x', /wildcard "#"/],
      ['mqtt://h/ts/+/read', /wildcard "\+"/],
      ['mqtt://h/', /must name the MQTT topic/],
      ['mqtt://h', /must name the MQTT topic/],
      ['mqtt://h/a?qos=3', /qos must be 0, 1 or 2 \(closest valid value: qos=2\)/],
      ['mqtt://h/a?qos=-1', /closest valid value: qos=0/],
      ['mqtt://h/a?qos=high', /closest valid value: qos=1/],
      ['mqtt://h/a?retain=yes', /retain must be true or false \(closest valid value: retain=true\)/],
      ['mqtt://h/a?ttl=5', /option "ttl" is unknown/],
      ['mqtt://h/$SYS/x', /must not start with "\$"/],
      ['mqtt://h/a%00b', /NUL/],
      ['mqtt://h/a%zz', /percent-encoded/],
    ];
    for (const [url, rule] of cases) {
      const message = mqttTransport.check(u(url));
      assert.ok(message !== undefined && !message.startsWith('Callback'), `${url}: ${message}`);
      assert.match(message ?? '', rule, url);
    }
  });

  it('escapes a template value into one topic level, reversibly', () => {
    const esc = mqttTransport.escapeValue!;
    const value = 'a/b#c+d$e%f\0g é';
    const rendered = new URL(`mqtt://h/ts/${esc(value)}/read`);
    assert.equal(mqttTransport.check(rendered), undefined);
    const topic = decodeURIComponent(rendered.pathname.slice(1));
    const levels = topic.split('/');
    assert.equal(levels.length, 3, topic);
    assert.doesNotMatch(levels[1]!, /[/#+$\0]/);
    assert.equal(decodeURIComponent(levels[1]!), value);
    assert.equal(esc('plain-value_1'), 'plain-value_1');
  });
});

describe('the MQTT transport against Mosquitto', { skip }, () => {
  it('publishes the payload, content type and headers as user properties, and the signature verifies', async () => {
    const base = uniqueName('ts');
    const sub = await subscriber(`${base}/#`);
    const { ctx } = recordingContext();
    const t = mqttTransport.create(ctx);
    try {
      const body = JSON.stringify({ series: 'x', value: 42 });
      const url = `${BROKER}/${base}/${mqttTransport.escapeValue!('x')}/read`;
      const attempt = signedAttempt(url, body, ['X-Trace', 'abc', 'X-Multi', '1', 'X-Multi', '2']);
      const outcome = await t.send(attempt);
      assert.equal(outcome.kind, 'delivered', outcome.text);
      assert.equal(outcome.text, `acknowledged by 127.0.0.1:1883, topic ${base}/x/read, QoS 1`);
      const [got] = await until('the message', () => (sub.got.length > 0 ? sub.got : undefined));
      assert.equal(got!.topic, `${base}/x/read`);
      assert.equal(got!.payload, body);
      assert.equal(got!.contentType, 'application/json');
      assert.equal(got!.props['X-Trace'], 'abc');
      assert.deepEqual(got!.props['X-Multi'], ['1', '2']);
      const headers = {
        'webhook-id': one(got!.props['webhook-id']),
        'webhook-timestamp': one(got!.props['webhook-timestamp']),
        'webhook-signature': one(got!.props['webhook-signature']),
      };
      assert.equal(headers['webhook-id'], attempt.id);
      assert.deepEqual(new Webhook(SECRET).verify(got!.payload, headers), { series: 'x', value: 42 });
    } finally {
      await t.close();
      await sub.client.endAsync();
    }
  });

  it('puts an escaped value into one topic level: a single-level subscriber gets it', async () => {
    const base = uniqueName('esc');
    const sub = await subscriber(`${base}/+/read`);
    const { ctx } = recordingContext();
    const t = mqttTransport.create(ctx);
    try {
      const value = 'dev/1#+';
      const outcome = await t.send(
        signedAttempt(`${BROKER}/${base}/${mqttTransport.escapeValue!(value)}/read`, '{}'),
      );
      assert.equal(outcome.kind, 'delivered', outcome.text);
      const [got] = await until('the message', () => (sub.got.length > 0 ? sub.got : undefined));
      assert.equal(got!.topic, `${base}/dev%2F1%23%2B/read`);
      assert.equal(decodeURIComponent(got!.topic.split('/')[1]!), value);
    } finally {
      await t.close();
      await sub.client.endAsync();
    }
  });

  it('honours qos=0, qos=2 and retain=true', async () => {
    const base = uniqueName('opts');
    const { ctx } = recordingContext();
    const t = mqttTransport.create(ctx);
    const late = await subscriber(`${base}/none`);
    try {
      const q0 = await t.send(signedAttempt(`${BROKER}/${base}/a?qos=0`, '{}'));
      assert.equal(q0.kind, 'delivered');
      assert.match(q0.text, /QoS 0: no acknowledgement/);
      const q2 = await t.send(signedAttempt(`${BROKER}/${base}/b?qos=2`, '{}'));
      assert.equal(q2.kind, 'delivered');
      assert.match(q2.text, /^acknowledged by 127\.0\.0\.1:1883, topic .*\/b, QoS 2$/);
      const kept = await t.send(signedAttempt(`${BROKER}/${base}/kept?retain=true`, '{"kept":1}'));
      assert.equal(kept.kind, 'delivered');
      assert.match(kept.text, /retained/);
      // A subscriber that comes after the publish still gets a retained message.
      await late.client.subscribeAsync(`${base}/kept`, { qos: 1 });
      const [got] = await until('the retained message', () => (late.got.length > 0 ? late.got : undefined));
      assert.equal(got!.payload, '{"kept":1}');
      // Clears the retained message: an empty retained payload removes it from the broker.
      await late.client.publishAsync(`${base}/kept`, '', { qos: 1, retain: true });
    } finally {
      await t.close();
      await late.client.endAsync();
    }
  });

  it('refuses an address the policy denies without connecting', async () => {
    const relay = await startTcpRelay('127.0.0.1', 1883);
    const { ctx } = recordingContext({ policy: new AddressPolicy([]) });
    const t = mqttTransport.create(ctx);
    try {
      const outcome = await t.send(signedAttempt(`mqtt://127.0.0.1:${relay.port}/${uniqueName('d')}`, '{}'));
      assert.equal(outcome.kind, 'refused');
      assert.equal(outcome.denied, true);
      assert.match(outcome.text, /127\.0\.0\.1, which is loopback.*--allow-callback-net 127\.0\.0\.0\/8/);
      assert.equal(relay.accepted, 0);
    } finally {
      await t.close();
      await relay.close();
    }
  });

  it('answers unreachable at once when nothing listens', async () => {
    const relay = await startTcpRelay('127.0.0.1', 1883);
    relay.cut();
    const { ctx } = recordingContext();
    const t = mqttTransport.create(ctx);
    try {
      const outcome = await t.send(signedAttempt(`mqtt://127.0.0.1:${relay.port}/x`, '{}'));
      assert.equal(outcome.kind, 'retry');
      assert.equal(outcome.unreachable, true);
      assert.match(outcome.text, new RegExp(`^127\\.0\\.0\\.1:${relay.port} unreachable`));
    } finally {
      await t.close();
      await relay.close();
    }
  });

  it('keeps delivering through a cut: retries while the broker is away, then every send succeeds and onReconnect is told', async () => {
    const relay = await startTcpRelay('127.0.0.1', 1883);
    const base = uniqueName('cut');
    const sub = await subscriber(`${base}/#`);
    const rec = recordingContext({ timeoutMs: 3000 });
    const t = mqttTransport.create(rec.ctx);
    const url = (i: number) => `mqtt://127.0.0.1:${relay.port}/${base}/${i}`;
    try {
      const outcomes: SendOutcome[] = [];
      for (let i = 0; i < 40; i++) {
        if (i === 15) relay.cut();
        if (i === 30) relay.restore();
        outcomes.push(await t.send(signedAttempt(url(i), `{"i":${i}}`)));
        if (i >= 15 && i < 30) assert.notEqual(outcomes[i]!.kind, 'delivered', `send ${i} during the cut`);
      }
      assert.ok(outcomes.slice(0, 15).every((o) => o.kind === 'delivered'));
      const during = outcomes.slice(15, 30);
      assert.ok(
        during.every((o) => o.kind === 'retry' && o.unreachable),
        JSON.stringify(during[0]),
      );
      // After the restore the link is back within its pause: sends deliver again.
      const back = await until('a delivered send after the restore', async () => {
        const o = await t.send(signedAttempt(url(99), '{"i":99}'));
        return o.kind === 'delivered' ? o : undefined;
      });
      assert.match(back.text, /^acknowledged by/);
      assert.deepEqual(rec.reconnects.slice(0, 1), [`mqtt://127.0.0.1:${relay.port}`]);
      const delivered = outcomes.filter((o) => o.kind === 'delivered').length + 1;
      await until('every delivered message at the subscriber', () => sub.got.length >= delivered);
    } finally {
      await t.close();
      await relay.close();
      await sub.client.endAsync();
    }
  });

  it('answers a broker that never acknowledges within the time limit, and abortAll ends what is in flight', async () => {
    // Reads and never answers: the MQTT handshake never completes.
    const silent = createServer((socket) => socket.resume());
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const { ctx } = recordingContext({ timeoutMs: 300, connectTimeoutMs: 5000 });
    const t = mqttTransport.create(ctx);
    try {
      const late = await t.send(signedAttempt(`mqtt://127.0.0.1:${port}/x`, '{}'));
      assert.equal(late.kind, 'retry');
      assert.equal(late.timedOut, true);
      assert.match(late.text, new RegExp(`no acknowledgement from 127\\.0\\.0\\.1:${port} within 300 ms`));
      const pending = t.send(signedAttempt(`mqtt://127.0.0.1:${port}/y`, '{}'));
      t.abortAll();
      const aborted = await pending;
      assert.equal(aborted.aborted, true);
    } finally {
      await t.close();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });
});

// A broker of the test's own needs the broker's program, not only the shared service.
const noMosquitto = skip ?? skipReason(!(await haveProgram('mosquitto')) && 'no mosquitto binary');

describe('the MQTT transport and credentials', { skip: noMosquitto }, () => {
  let broker: Awaited<ReturnType<typeof startPrivateMosquitto>>;
  before(async () => {
    broker = await startPrivateMosquitto('hook', 'right-pw');
  });
  after(async () => {
    await broker?.stop();
  });

  it('names wrong credentials as a refusal that does not show the password', async () => {
    const { ctx } = recordingContext();
    const t = mqttTransport.create(ctx);
    try {
      const wrong = await t.send(signedAttempt(`mqtt://hook:wrong-pw@127.0.0.1:${broker.port}/a`, '{}'));
      assert.equal(wrong.kind, 'refused', wrong.text);
      // Mosquitto 2 answers a wrong password with 135 (not authorized), others with 134.
      assert.match(
        wrong.text,
        /^broker 127\.0\.0\.1:\d+ refused the connection for user hook: (not authorized \(CONNACK 135\)|bad user name or password \(CONNACK 134\))$/,
      );
      assert.ok(!wrong.text.includes('wrong-pw'));
      const anonymous = await t.send(signedAttempt(`mqtt://127.0.0.1:${broker.port}/a`, '{}'));
      assert.equal(anonymous.kind, 'refused');
      assert.match(anonymous.text, /for anonymous: not authorized \(CONNACK 135\)/);
      const right = await t.send(signedAttempt(`mqtt://hook:right-pw@127.0.0.1:${broker.port}/a`, '{}'));
      assert.equal(right.kind, 'delivered', right.text);
    } finally {
      await t.close();
    }
  });
});
