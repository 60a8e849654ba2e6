/**
 * The seam between the delivery core and the wire. The core decides what to send and when; a
 * transport only knows how to hand one rendered attempt to one kind of receiver (an HTTP server,
 * a RabbitMQ exchange, an MQTT topic, a NATS subject, a Redis stream) and what the receiver said.
 * A transport never imports the core: it sees plain attempts and answers with plain outcomes.
 */
import type { TlsConnectOptions } from '../client-tls/index.js';
import type { Tunnel } from '../egress/index.js';
import type { AddressChecker, LookupAll } from '../policy/index.js';

/** One attempt, rendered and signed by the core, ready for the wire. */
export interface TransportAttempt {
  /** The delivery's id: the Standard Webhooks `webhook-id`, a message id, a dedup id. */
  readonly id: string;
  /** The Callback URL with its template values filled in and escaped for their places. */
  readonly url: string;
  /** The callback method (HTTP only; the other transports publish). */
  readonly method: string;
  /** Flat `[name, value, …]` list: the hook's headers, the signature and trace headers. */
  readonly headers: readonly string[];
  /** The payload; absent for HTTP GET and DELETE callbacks. */
  readonly body: string | undefined;
  /** The payload's media type (`CallbackContentMediaType`). */
  readonly contentType: string | undefined;
  /** The send time as epoch ms (message timestamps). */
  readonly sentAt: number;
  /** The hook's client certificate and private CA (HTTPS only; src/client-tls/). */
  readonly tls?: TlsConnectOptions;
  /** Aborted at shutdown once the drain time is over: the send ends `aborted`. */
  readonly signal?: AbortSignal;
}

/**
 * What the receiver made of an attempt, in the core's words. `delivered` carries the receipt
 * (an HTTP status line, "confirmed by …", an entry id); the others the cause.
 */
export interface SendOutcome {
  readonly kind: 'delivered' | 'retry' | 'gone' | 'refused';
  /** The receipt in words when delivered; the cause otherwise. Never holds credentials. */
  readonly text: string;
  readonly latencyMs: number;
  /** retry: not before this many ms from now (an HTTP `Retry-After`, a broker's back-off). */
  readonly retryAfterMs?: number;
  /** The receiver's host could not be reached at all (refused, DNS, TLS, connect time-out). */
  readonly unreachable?: boolean;
  /**
   * No answer came: the time limit ran out, or the connection broke before the receiver said
   * anything. A failure of the endpoint, not of its host.
   */
  readonly timedOut?: boolean;
  /** The address policy refused the target: nothing was sent. */
  readonly denied?: boolean;
  /** Shutdown ended the attempt: its outcome is unknown and the delivery stays pending. */
  readonly aborted?: boolean;
  /**
   * The receiver's own code for its answer, where its protocol has one beside the verdict (an
   * HTTP status): the delivery log records it. Absent when there was no answer.
   */
  readonly answerCode?: number;
  /** With `answerCode`: the first bytes of what the receiver answered (an HTTP body). */
  readonly answerText?: string;
  /** With `answerCode`: what broke after the answer began (the connection, mid-body). */
  readonly answerFault?: string;
  /** The receiver said it has too much to do (HTTP 429 or 503): its pace backs off. */
  readonly overloaded?: boolean;
  /** The receiver refused the attempt's credentials (HTTP 401): a bearer token is renewed once. */
  readonly unauthorized?: boolean;
}

/**
 * An exchange with a receiver before its callbacks, asking whether it wants them (the CloudEvents
 * validation handshake's `OPTIONS`). A transport whose receivers cannot answer one has none.
 */
export interface PreflightRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

/** The receiver's answer to a preflight: its code and headers (the body is read and dropped). */
export interface PreflightAnswer {
  readonly code: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** What every transport instance is given when the daemon makes it. */
export interface TransportContext {
  /** The callback target policy: every resolved address of a receiver is checked before use. */
  readonly policy: AddressChecker;
  readonly lookup: LookupAll | undefined;
  /** The whole attempt's time limit, ms. */
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  /** At most this many attempts in flight per receiver (connections for HTTP). */
  readonly perReceiver: number;
  /** Where a transport says what happened to its connections (reconnects, closes). */
  readonly log: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void;
  /**
   * A transport tells the core that a receiver's connection is back, so its breaker may
   * half-open at once instead of after the cool-down.
   */
  readonly onReconnect?: (receiverKey: string) => void;
  /** Connections leave through the egress proxy (`--callback-proxy`), after the policy check. */
  readonly tunnel?: Tunnel;
}

/** A live transport: connections and sends. */
export interface Transport {
  /** Sends one attempt; never rejects: every fault is an outcome. */
  send(attempt: TransportAttempt): Promise<SendOutcome>;
  /** Ends the attempts in flight (shutdown): they answer `aborted`. */
  abortAll(): void;
  /**
   * Sends a preflight on the callbacks' own connections (the address policy and the egress proxy
   * apply); rejects when no answer came (`TimeoutError` when the time limit ran out).
   */
  preflight?(request: PreflightRequest): Promise<PreflightAnswer>;
  /** Closes every connection. */
  close(): Promise<void>;
}

/**
 * Where attempts go by their Callback's scheme: the process's own transports (`TransportSet`), or
 * delivery threads holding transports of their own (src/executors/). Never rejects.
 */
export interface AttemptSender {
  /** `protocol` as `URL.protocol` gives it (`https:`). */
  send(protocol: string, attempt: TransportAttempt): Promise<SendOutcome>;
  /** Ends the attempts in flight (shutdown's drain time is over): they answer `aborted`. */
  abortAll(): void;
  close(): Promise<void>;
}

/** What a pipeline gives the sender it opens: its limits, and where connection news goes. */
export type SenderContext = Omit<TransportContext, 'policy' | 'lookup' | 'tunnel'>;

/**
 * Senders made elsewhere and opened by a pipeline with its limits (the delivery threads): they
 * bring their own address policy and egress proxy.
 */
export interface SenderSource {
  open(ctx: SenderContext): AttemptSender;
}

/**
 * A kind of transport, registered by scheme the way Caddy registers modules by name. The static
 * parts (key, check, escape, describe) need no connection: the API uses them at create time.
 */
export interface TransportModule {
  /** The URL schemes it serves, without the colon: `['amqp', 'amqps']`. */
  readonly schemes: readonly string[];
  /**
   * The receiver's isolation key: breakers, fairness, rate limits and verification are keyed by
   * it. Scheme, host, port and user (and what else makes a receiver, e.g. an AMQP vhost); never
   * a password.
   */
  receiverKey(url: URL): string;
  /**
   * The create-time check of a Callback URL as the user wrote it (templates unrendered): the URL
   * shape, wildcards, options. A message naming the rule (and the closest valid value), or
   * undefined when it is well formed. The address policy is checked by the caller.
   */
  check(url: URL): string | undefined;
  /**
   * Escapes a template value for the place it fills in this scheme's URLs (an MQTT topic level,
   * a NATS subject token), returned URL-encoded. Absent: the URL takes no template values.
   */
  escapeValue?(value: string): string;
  /**
   * Header names (lower case) a hook may not set on this scheme because the message uses them
   * itself: a Redis stream entry carries its payload in the field `body`.
   */
  readonly reservedHeaders?: readonly string[];
  /** The target as logs and pages show it: no credentials. */
  describe(url: URL): string;
  create(ctx: TransportContext): Transport;
}
