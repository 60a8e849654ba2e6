/**
 * Publishes rendered attempts to MQTT 5 brokers with mqtt.js: one client per broker and
 * credentials, QoS 1 by default, the PUBACK (PUBCOMP for QoS 2) is the receipt.
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { connect, type IClientPublishOptions, type IConnackPacket, type MqttClient } from 'mqtt';
import {
  Attempts,
  BrokerLinks,
  type BrokerTarget,
  connectFor,
  hostPort,
  LinkFailure,
  type LinkSpec,
  PreparedTargets,
  type Verdict,
} from '../broker-link/index.js';
import type { SendOutcome, Transport, TransportAttempt, TransportContext } from '../transport.js';
import { type MqttTarget, parseMqttUrl } from './mqtt-url.js';

/** A client and how many QoS 1/2 publishes the broker takes at once (its Receive Maximum). */
interface MqttConn {
  readonly client: MqttClient;
  readonly address: string;
  readonly receiveMaximum: number;
  inFlight: number;
  readonly waiting: (() => void)[];
}

// CONNACK reason codes a broker refuses us with, in words (MQTT 5 §3.2.2.2).
const CONNACK: Record<number, string> = {
  128: 'unspecified error',
  132: 'unsupported protocol version',
  133: 'client identifier not valid',
  134: 'bad user name or password',
  135: 'not authorized',
  136: 'server unavailable',
  137: 'server busy',
  138: 'banned',
  140: 'bad authentication method',
  151: 'quota exceeded',
};

// PUBACK reason codes that refuse the message itself (MQTT 5 §3.4.2.1); the rest are worth a retry.
const PUBACK_REFUSED: Record<number, string> = {
  135: 'not authorized to publish to this topic',
  144: 'topic name invalid',
  149: 'packet too large',
  153: 'payload format invalid',
};

/** How the shared link opens, watches and closes mqtt.js clients for one broker and user. */
function linkSpec(t: MqttTarget, timeoutMs: number): LinkSpec<MqttConn> {
  return {
    receiverKey: t.receiverKey,
    label: t.label,
    host: t.host,
    async open(address, lost, signal) {
      const conn = await openClient(t, address, timeoutMs, signal);
      let cause: Error | undefined;
      conn.client.on('error', (err) => {
        cause = err;
      });
      conn.client.once('close', () => lost(cause?.message));
      return conn;
    },
    classify: (err) => connectFailure(err, t),
    shut(conn) {
      // end(true) answers the publishes still waiting for an acknowledgement with an error at once.
      return new Promise<void>((resolve) => conn.client.end(true, {}, () => resolve()));
    },
  };
}

function openClient(
  t: MqttTarget,
  address: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<MqttConn> {
  return new Promise<MqttConn>((resolve, reject) => {
    const client = connect({
      protocol: t.tls ? 'mqtts' : 'mqtt',
      host: address,
      port: t.port,
      protocolVersion: 5,
      clientId: `hookd-${randomUUID().slice(0, 13)}`,
      clean: true,
      connectTimeout: timeoutMs,
      // The link reconnects, checking the address policy again; mqtt.js would resend old packets.
      reconnectPeriod: 0,
      ...(t.username === '' ? {} : { username: t.username }),
      ...(t.password === '' ? {} : { password: t.password }),
      ...(t.tls && isIP(t.host) === 0 ? { servername: t.host } : {}),
    });
    let settled = false;
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      done();
      client.on('error', () => {});
      client.end(true);
      // Before a CONNACK mqtt.js leaves the socket open; a broker that never answers keeps it.
      client.stream?.destroy();
      reject(err);
    };
    const onAbort = (): void => fail(new Error('hookd is shutting down'));
    const onError = (err: Error): void => fail(err);
    const onClose = (): void =>
      fail(Object.assign(new Error('the broker closed the connection'), { code: 'ECONNRESET' }));
    const onConnect = (connack: IConnackPacket): void => {
      if (settled) return;
      settled = true;
      done();
      const max = connack.properties?.receiveMaximum ?? 65_535;
      resolve({ client, address, receiveMaximum: max, inFlight: 0, waiting: [] });
    };
    const timer = setTimeout(
      () => fail(Object.assign(new Error(`no CONNACK within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })),
      timeoutMs,
    );
    // Only our own listeners go: mqtt.js keeps internal ones on the same events.
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      client.off('connect', onConnect);
      client.off('error', onError);
      client.off('close', onClose);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    client.on('connect', onConnect);
    client.on('error', onError);
    client.on('close', onClose);
  });
}

function connectFailure(err: unknown, target: BrokerTarget): LinkFailure {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'number' && CONNACK[code] !== undefined) {
    const user = target.username === '' ? 'anonymous' : `user ${target.username}`;
    // "Server unavailable" and "server busy" are outages, worth reconnecting in the background.
    return new LinkFailure(
      code === 136 || code === 137 ? 'unreachable' : 'refused',
      `broker ${target.label} refused the connection for ${user}: ${CONNACK[code]} (CONNACK ${code})`,
    );
  }
  // Anything short of a CONNACK (refused, reset, TLS, time-out) means the broker was not reached.
  const message = err instanceof Error ? err.message : String(err);
  const prefix = typeof code === 'string' && !message.includes(code) ? `${code}: ` : '';
  return new LinkFailure('unreachable', `${target.label} unreachable: ${prefix}${message}`);
}

/** The hook's headers as MQTT 5 user properties (a repeated name becomes a list). */
function userProperties(flat: readonly string[]): Record<string, string | string[]> {
  const props: Record<string, string | string[]> = Object.create(null);
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = flat[i]!;
    const value = flat[i + 1]!;
    const had = props[name];
    props[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return props;
}

async function acquire(conn: MqttConn): Promise<void> {
  if (conn.inFlight < conn.receiveMaximum) {
    conn.inFlight++;
    return;
  }
  // Over the broker's Receive Maximum it disconnects us (0x93): wait for an acknowledgement.
  await new Promise<void>((resolve) => conn.waiting.push(resolve));
}

function release(conn: MqttConn): void {
  const next = conn.waiting.shift();
  if (next !== undefined) next();
  else conn.inFlight--;
}

class MqttTransport implements Transport {
  readonly #links: BrokerLinks<MqttConn>;
  readonly #attempts: Attempts;
  readonly #targets: PreparedTargets<MqttTarget, MqttConn>;

  constructor(private readonly ctx: TransportContext) {
    this.#links = new BrokerLinks(ctx);
    this.#attempts = new Attempts(ctx.timeoutMs);
    this.#targets = new PreparedTargets<MqttTarget, MqttConn>((url) => {
      const target = parseMqttUrl(new URL(url));
      if (typeof target === 'string') return { refused: `not sent: ${target}` };
      const link = this.#links.link(target.receiverKey, target.password, () =>
        linkSpec(target, this.ctx.connectTimeoutMs),
      );
      return { target, link };
    });
  }

  send(attempt: TransportAttempt): Promise<SendOutcome> {
    let label = 'the broker';
    return this.#attempts.run(
      (ms) => `no acknowledgement from ${label} within ${ms} ms`,
      async (live) => {
        const p = this.#targets.of(attempt.url);
        if ('refused' in p) return { kind: 'refused', text: p.refused };
        const { target, link } = p;
        label = target.label;
        const got = await connectFor(link, live);
        if ('verdict' in got) return got.verdict;
        return publish(got.conn, target, attempt, live);
      },
      attempt.signal,
    );
  }

  abortAll(): void {
    this.#attempts.abortAll();
  }

  close(): Promise<void> {
    return this.#links.close();
  }
}

async function publish(
  conn: MqttConn,
  target: MqttTarget,
  attempt: TransportAttempt,
  live: () => boolean,
): Promise<Verdict> {
  const opts: IClientPublishOptions = {
    qos: target.qos,
    retain: target.retain,
    properties: {
      userProperties: userProperties(attempt.headers),
      ...(attempt.contentType === undefined ? {} : { contentType: attempt.contentType }),
    },
  };
  const by = hostPort(conn.address, target.port);
  const where = `topic ${target.topic}, QoS ${target.qos}${target.retain ? ', retained' : ''}`;
  if (target.qos === 0) {
    await conn.client.publishAsync(target.topic, attempt.body ?? '', opts);
    return { kind: 'delivered', text: `sent to ${by}, ${where} (QoS 0: no acknowledgement)` };
  }
  await acquire(conn);
  try {
    if (!live()) return { kind: 'retry', text: 'not sent: the attempt ended while waiting for the broker' };
    await conn.client.publishAsync(target.topic, attempt.body ?? '', opts);
    return { kind: 'delivered', text: `acknowledged by ${by}, ${where}` };
  } catch (err) {
    return publishFailure(err, by, target);
  } finally {
    release(conn);
  }
}

function publishFailure(err: unknown, by: string, target: BrokerTarget & { topic: string }): Verdict {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'number') {
    const refused = PUBACK_REFUSED[code];
    if (refused !== undefined) {
      return {
        kind: 'refused',
        text: `broker ${by} refused topic ${target.topic}: ${refused} (PUBACK ${code})`,
      };
    }
    return {
      kind: 'retry',
      text: `broker ${by} did not take the message: ${(err as Error).message} (PUBACK ${code})`,
    };
  }
  const message = err instanceof Error ? err.message : String(err);
  return {
    kind: 'retry',
    text: `connection to ${by} lost before the acknowledgement (${message})`,
    unreachable: true,
  };
}

export function createMqttTransport(ctx: TransportContext): Transport {
  return new MqttTransport(ctx);
}
