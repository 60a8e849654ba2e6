/**
 * Publishes rendered attempts to NATS JetStream with nats.js: one connection per server and
 * credentials; the stream's publish acknowledgement is the receipt, and `Nats-Msg-Id` (the
 * delivery's id) lets the stream drop a redelivery it already stored.
 */
import { JetStreamApiError, type JetStreamClient, jetstream } from '@nats-io/jetstream';
import { connect, errors, headers, type NatsConnection, RequestError } from '@nats-io/transport-node';
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
import { type NatsTarget, parseNatsUrl } from './nats-url.js';

interface NatsConn {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly address: string;
}

/** How the shared link opens, watches and closes nats.js connections for one server and user. */
function linkSpec(t: NatsTarget, timeoutMs: number): LinkSpec<NatsConn> {
  return {
    receiverKey: t.receiverKey,
    label: t.label,
    host: t.host,
    async open(address, lost, signal) {
      const conn = await openConnection(t, address, timeoutMs, signal);
      void conn.nc.closed().then((err) => lost(err instanceof Error ? err.message : undefined));
      return conn;
    },
    classify: (err) => connectFailure(err, t),
    async shut(conn) {
      if (!conn.nc.isClosed()) await conn.nc.close();
    },
  };
}

async function openConnection(
  target: BrokerTarget,
  address: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<NatsConn> {
  const opening = connect({
    servers: hostPort(address, target.port),
    name: 'hookd',
    timeout: timeoutMs,
    // The link reconnects, checking the address policy again; the server's gossip of other
    // cluster addresses is ignored for the same reason.
    reconnect: false,
    ignoreClusterUpdates: true,
    ...(target.username === '' ? {} : { user: target.username }),
    ...(target.password === '' ? {} : { pass: target.password }),
  });
  // nats.js takes no signal: at shutdown the caller stops waiting, and a late connection closes.
  const aborted = new Promise<never>((_, reject) => {
    const stop = () => reject(new Error('hookd is shutting down'));
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  aborted.catch(() => {});
  opening.then(
    (nc) => signal.aborted && void nc.close(),
    () => {},
  );
  const nc = await Promise.race([opening, aborted]);
  return { nc, js: jetstream(nc), address };
}

function connectFailure(err: unknown, target: BrokerTarget): LinkFailure {
  if (err instanceof errors.AuthorizationError || err instanceof errors.UserAuthenticationExpiredError) {
    const user = target.username === '' ? 'anonymous' : `user ${target.username}`;
    return new LinkFailure(
      'refused',
      `server ${target.label} refused the connection for ${user}: ${err.message}`,
    );
  }
  // nats.js says "node provided an undefined error" when the socket closes before the greeting.
  const raw = err instanceof Error ? err.message : String(err);
  const message = raw.includes('undefined error') ? 'the connection closed before the server greeted' : raw;
  const code = (err as { code?: unknown } | undefined)?.code;
  const prefix = typeof code === 'string' && !message.includes(code) ? `${code}: ` : '';
  return new LinkFailure('unreachable', `${target.label} unreachable: ${prefix}${message}`);
}

function natsHeaders(attempt: TransportAttempt) {
  const h = headers();
  for (let i = 0; i + 1 < attempt.headers.length; i += 2)
    h.append(attempt.headers[i]!, attempt.headers[i + 1]!);
  if (attempt.contentType !== undefined && !h.has('Content-Type')) h.set('Content-Type', attempt.contentType);
  return h;
}

class NatsTransport implements Transport {
  readonly #links: BrokerLinks<NatsConn>;
  readonly #attempts: Attempts;
  readonly #timeoutMs: number;
  readonly #targets: PreparedTargets<NatsTarget, NatsConn>;

  constructor(private readonly ctx: TransportContext) {
    this.#links = new BrokerLinks(ctx);
    this.#attempts = new Attempts(ctx.timeoutMs);
    this.#timeoutMs = ctx.timeoutMs;
    this.#targets = new PreparedTargets<NatsTarget, NatsConn>((url) => {
      const target = parseNatsUrl(new URL(url));
      if (typeof target === 'string') return { refused: `not sent: ${target}` };
      const link = this.#links.link(target.receiverKey, target.password, () =>
        linkSpec(target, this.ctx.connectTimeoutMs),
      );
      return { target, link };
    });
  }

  send(attempt: TransportAttempt): Promise<SendOutcome> {
    let label = 'the server';
    const started = Date.now();
    return this.#attempts.run(
      (ms) => `no JetStream acknowledgement from ${label} within ${ms} ms`,
      async (live) => {
        const p = this.#targets.of(attempt.url);
        if ('refused' in p) return { kind: 'refused', text: p.refused };
        const { target, link } = p;
        label = target.label;
        const got = await connectFor(link, live);
        if ('verdict' in got) return got.verdict;
        const left = Math.max(1, this.#timeoutMs - (Date.now() - started));
        return publish(got.conn, target, attempt, left);
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
  conn: NatsConn,
  target: NatsTarget,
  attempt: TransportAttempt,
  timeoutMs: number,
): Promise<Verdict> {
  const by = hostPort(conn.address, target.port);
  try {
    const ack = await conn.js.publish(target.subject, attempt.body ?? '', {
      msgID: attempt.id,
      headers: natsHeaders(attempt),
      timeout: timeoutMs,
    });
    return {
      kind: 'delivered',
      text: ack.duplicate
        ? `duplicate of sequence ${ack.seq} in stream ${ack.stream}, already stored by ${by}`
        : `stored in stream ${ack.stream} as sequence ${ack.seq} by ${by}`,
    };
  } catch (err) {
    return publishFailure(err, by, target, conn.nc.isClosed());
  }
}

function publishFailure(err: unknown, by: string, target: NatsTarget, closed: boolean): Verdict {
  // No stream listens on the subject: the request has no responders (a 503), answered at once.
  if (isNoResponders(err)) {
    return { kind: 'refused', text: `no JetStream stream captures subject ${target.subject} (on ${by})` };
  }
  if (err instanceof errors.PermissionViolationError) {
    return { kind: 'refused', text: `server ${by} does not permit publishing to subject ${target.subject}` };
  }
  if (err instanceof JetStreamApiError) {
    // The stream exists and said no (full with discard new, a limit): worth a retry later.
    return {
      kind: 'retry',
      text: `stream refused the message on ${by}: ${err.message} (err_code ${err.code})`,
    };
  }
  if (err instanceof errors.TimeoutError) {
    return { kind: 'retry', text: `no JetStream acknowledgement from ${by} in time`, timedOut: true };
  }
  // nats.js answers a request cut off by a closing connection with a plain RequestError.
  if (
    closed ||
    inChain(err, (e) => e instanceof errors.ClosedConnectionError || e instanceof errors.ConnectionError)
  ) {
    return { kind: 'retry', text: `connection to ${by} lost before the acknowledgement`, unreachable: true };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { kind: 'retry', text: `not stored by ${by}: ${message}` };
}

function isNoResponders(err: unknown): boolean {
  return inChain(
    err,
    (e) => e instanceof errors.NoRespondersError || (e instanceof RequestError && e.isNoResponders()),
  );
}

/** Whether the error or one of its causes is of a kind (nats.js wraps causes a level or two deep). */
function inChain(err: unknown, is: (e: Error) => boolean): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; depth++) {
    if (is(e)) return true;
    e = e.cause;
  }
  return false;
}

export function createNatsTransport(ctx: TransportContext): Transport {
  return new NatsTransport(ctx);
}
