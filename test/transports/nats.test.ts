import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Webhook } from 'standardwebhooks';
import { AddressPolicy } from '../../src/policy/index.js';
import { natsTransport, type SendOutcome } from '../../src/transports/index.js';
import { skipReason } from '../helpers/require.js';
import { startTcpRelay } from '../helpers/tcp-relay.js';
import {
  brokerMissing,
  haveProgram,
  recordingContext,
  SECRET,
  signedAttempt,
  startPrivateNats,
  uniqueName,
} from '../helpers/transport-kit.js';
import { until } from '../helpers/until.js';

const SERVER = 'nats://127.0.0.1:4222';
const skip = await brokerMissing('NATS', 4222);

describe('the NATS module without a server', () => {
  const u = (s: string) => new URL(s);

  it('keys a receiver by scheme, host, port and user, never the password', () => {
    assert.equal(
      natsTransport.receiverKey(u('nats://alice:s3cret@Nats.example:4222/a.b')),
      'nats://alice@nats.example:4222',
    );
    assert.equal(natsTransport.receiverKey(u('nats://127.0.0.1/a')), 'nats://127.0.0.1:4222');
    assert.equal(natsTransport.receiverKey(u('nats://[::1]:4333/a')), 'nats://[::1]:4333');
  });

  it('describes a target without its password', () => {
    const d = natsTransport.describe(u('nats://alice:s3cret@127.0.0.1:4222/ts.$1.read'));
    assert.equal(d, 'nats://alice@127.0.0.1:4222/ts.$1.read');
    assert.ok(!d.includes('s3cret'));
  });

  it('accepts well-formed Callbacks', () => {
    for (const ok of [
      'nats://127.0.0.1:4222/ts.$1.read',
      'nats://u:p@h/acc.x',
      'nats://h/$1.x',
      'nats://h/${REQUEST_USER}.x',
    ]) {
      assert.equal(natsTransport.check(u(ok)), undefined, ok);
    }
  });

  it("refuses wildcards, an empty subject, empty tokens and the server's own subjects, naming the rule (the caller names Callback)", () => {
    const cases: [string, RegExp][] = [
      ['nats://h/ts.*.read', /wildcard "\*"/],
      ['nats://h/ts.>', /wildcard ">"/],
      ['nats://h/ts.%3E', /wildcard ">"/],
      ['nats://h/', /must name the NATS subject/],
      ['nats://h', /must name the NATS subject/],
      ['nats://h/ts..read', /empty token/],
      ['nats://h/ts.', /empty token/],
      ['nats://h/ts%20x', /whitespace/],
      ['nats://h/$JS.API.STREAM.DELETE.TS', /must not start with "\$"/],
      ['nats://h/a?stream=TS', /takes no query options/],
      ['nats://h/a%zz', /percent-encoded/],
    ];
    for (const [url, rule] of cases) {
      const message = natsTransport.check(u(url));
      assert.ok(message !== undefined && !message.startsWith('Callback'), `${url}: ${message}`);
      assert.match(message ?? '', rule, url);
    }
  });

  it('escapes a template value into one subject token, reversibly', () => {
    const esc = natsTransport.escapeValue!;
    const value = 'a.b*c>d e\tf%g$h é';
    const rendered = new URL(`nats://h/ts.${esc(value)}.read`);
    assert.equal(natsTransport.check(rendered), undefined);
    const subject = decodeURIComponent(rendered.pathname.slice(1));
    const tokens = subject.split('.');
    assert.equal(tokens.length, 3, subject);
    assert.doesNotMatch(tokens[1]!, /[.*>\s$]/);
    assert.equal(decodeURIComponent(tokens[1]!), value);
    assert.equal(esc('plain-value_1'), 'plain-value_1');
  });
});

describe('the NATS transport against JetStream', { skip }, () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const streams: string[] = [];

  before(async () => {
    nc = await connect({ servers: '127.0.0.1:4222' });
    jsm = await jetstreamManager(nc);
  });
  after(async () => {
    for (const s of streams) await jsm.streams.delete(s).catch(() => false);
    await nc?.close();
  });

  /** A stream of this test's own capturing `<base>.>`. */
  async function stream(): Promise<{ name: string; base: string }> {
    const name = uniqueName('HOOKD');
    const base = uniqueName('ts').toLowerCase();
    await jsm.streams.add({ name, subjects: [`${base}.>`], duplicate_window: 120_000_000_000 });
    streams.push(name);
    return { name, base };
  }

  it('stores the payload with the headers, the content type and the msg id; the signature verifies', async () => {
    const { name, base } = await stream();
    const { ctx } = recordingContext();
    const t = natsTransport.create(ctx);
    try {
      const body = JSON.stringify({ series: 'x', value: 42 });
      const attempt = signedAttempt(`${SERVER}/${base}.${natsTransport.escapeValue!('x')}.read`, body, [
        'X-Trace',
        'abc',
        'X-Multi',
        '1',
        'X-Multi',
        '2',
      ]);
      const outcome = await t.send(attempt);
      assert.equal(outcome.kind, 'delivered', outcome.text);
      assert.equal(outcome.text, `stored in stream ${name} as sequence 1 by 127.0.0.1:4222`);
      const consumer = await jetstream(nc).consumers.get(name);
      const m = await consumer.next({ expires: 5000 });
      assert.ok(m, 'a message from the stream');
      assert.equal(m.subject, `${base}.x.read`);
      assert.equal(m.string(), body);
      assert.equal(m.headers?.get('Content-Type'), 'application/json');
      assert.equal(m.headers?.get('Nats-Msg-Id'), attempt.id);
      assert.equal(m.headers?.get('X-Trace'), 'abc');
      assert.deepEqual(m.headers?.values('X-Multi'), ['1', '2']);
      const headers = {
        'webhook-id': m.headers?.get('webhook-id') ?? '',
        'webhook-timestamp': m.headers?.get('webhook-timestamp') ?? '',
        'webhook-signature': m.headers?.get('webhook-signature') ?? '',
      };
      assert.deepEqual(new Webhook(SECRET).verify(m.string(), headers), { series: 'x', value: 42 });
    } finally {
      await t.close();
    }
  });

  it('stores an attempt sent twice once: the second answer names the duplicate', async () => {
    const { name, base } = await stream();
    const { ctx } = recordingContext();
    const t = natsTransport.create(ctx);
    try {
      const attempt = signedAttempt(`${SERVER}/${base}.dup`, '{"once":true}');
      const first = await t.send(attempt);
      const again = await t.send({ ...attempt, sentAt: Date.now() });
      assert.equal(first.kind, 'delivered');
      assert.equal(again.kind, 'delivered', again.text);
      assert.equal(again.text, `duplicate of sequence 1 in stream ${name}, already stored by 127.0.0.1:4222`);
      const info = await jsm.streams.info(name);
      assert.equal(info.state.messages, 1);
    } finally {
      await t.close();
    }
  });

  it('puts an escaped value into one subject token', async () => {
    const { name, base } = await stream();
    const { ctx } = recordingContext();
    const t = natsTransport.create(ctx);
    try {
      const outcome = await t.send(
        signedAttempt(`${SERVER}/${base}.${natsTransport.escapeValue!('dev.1 *>')}.read`, '{}'),
      );
      assert.equal(outcome.kind, 'delivered', outcome.text);
      const m = await jsm.streams.getMessage(name, { seq: 1 });
      assert.equal(m?.subject, `${base}.dev%2E1%20%2A%3E.read`);
      assert.equal(m?.subject.split('.').length, 3);
    } finally {
      await t.close();
    }
  });

  it('refuses a subject no stream captures at once, in words, instead of waiting for the time limit', async () => {
    const { ctx } = recordingContext({ timeoutMs: 20_000 });
    const t = natsTransport.create(ctx);
    try {
      const subject = `${uniqueName('acc').toLowerCase()}.x.1`;
      const outcome = await t.send(signedAttempt(`${SERVER}/${subject}`, '{}'));
      assert.equal(outcome.kind, 'refused');
      assert.equal(outcome.timedOut, undefined);
      assert.equal(outcome.text, `no JetStream stream captures subject ${subject} (on 127.0.0.1:4222)`);
    } finally {
      await t.close();
    }
  });

  it('refuses an address the policy denies without connecting', async () => {
    const relay = await startTcpRelay('127.0.0.1', 4222);
    const { ctx } = recordingContext({ policy: new AddressPolicy([]) });
    const t = natsTransport.create(ctx);
    try {
      const outcome = await t.send(signedAttempt(`nats://127.0.0.1:${relay.port}/a.b`, '{}'));
      assert.equal(outcome.kind, 'refused');
      assert.equal(outcome.denied, true);
      assert.match(outcome.text, /127\.0\.0\.1, which is loopback.*--allow-callback-net 127\.0\.0\.0\/8/);
      assert.equal(relay.accepted, 0);
    } finally {
      await t.close();
      await relay.close();
    }
  });

  it('keeps delivering through a cut: retries while the server is away, then every send succeeds and onReconnect is told', async () => {
    const { name, base } = await stream();
    const relay = await startTcpRelay('127.0.0.1', 4222);
    const rec = recordingContext({ timeoutMs: 3000 });
    const t = natsTransport.create(rec.ctx);
    const url = (i: number) => `nats://127.0.0.1:${relay.port}/${base}.${i}`;
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
        during.every((o) => o.kind === 'retry' && (o.unreachable || o.timedOut)),
        JSON.stringify(during),
      );
      const back = await until('a delivered send after the restore', async () => {
        const o = await t.send(signedAttempt(url(99), '{"i":99}'));
        return o.kind === 'delivered' ? o : undefined;
      });
      assert.match(back.text, /^stored in stream/);
      assert.deepEqual(rec.reconnects.slice(0, 1), [`nats://127.0.0.1:${relay.port}`]);
      const delivered = outcomes.filter((o) => o.kind === 'delivered').length + 1;
      const info = await jsm.streams.info(name);
      assert.equal(info.state.messages, delivered);
    } finally {
      await t.close();
      await relay.close();
    }
  });
});

// A broker of the test's own needs the broker's program, not only the shared service.
const noNatsServer = skip ?? skipReason(!(await haveProgram('nats-server')) && 'no nats-server binary');

describe('the NATS transport and credentials', { skip: noNatsServer }, () => {
  let server: Awaited<ReturnType<typeof startPrivateNats>>;
  before(async () => {
    server = await startPrivateNats('hook', 'right-pw');
  });
  after(async () => {
    await server?.stop();
  });

  it('names wrong credentials as a refusal that does not show the password', async () => {
    const { ctx } = recordingContext();
    const t = natsTransport.create(ctx);
    try {
      const wrong = await t.send(signedAttempt(`nats://hook:wrong-pw@127.0.0.1:${server.port}/a.b`, '{}'));
      assert.equal(wrong.kind, 'refused', wrong.text);
      assert.match(wrong.text, /^server 127\.0\.0\.1:\d+ refused the connection for user hook: /);
      assert.ok(!wrong.text.includes('wrong-pw'));
      // The right password connects; this private server has no JetStream, so nothing captures.
      const right = await t.send(signedAttempt(`nats://hook:right-pw@127.0.0.1:${server.port}/a.b`, '{}'));
      assert.equal(right.kind, 'refused', right.text);
      assert.match(right.text, /^no JetStream stream captures subject a\.b/);
    } finally {
      await t.close();
    }
  });
});
