/**
 * The live transports of one process: each module's transport made on first use with the
 * daemon's context, found by a Callback URL's scheme, aborted and closed together at shutdown.
 */
import type { TransportRegistry } from './registry.js';
import type {
  AttemptSender,
  SendOutcome,
  Transport,
  TransportAttempt,
  TransportContext,
  TransportModule,
} from './transport.js';

export class TransportSet implements AttemptSender {
  readonly #live = new Map<TransportModule, Transport>();
  // Scheme (with its colon, as `URL.protocol` gives it) to transport: one look-up per attempt.
  readonly #byProtocol = new Map<string, Transport | undefined>();

  constructor(
    readonly registry: TransportRegistry,
    private readonly ctx: TransportContext,
  ) {}

  /** The transport for a URL's protocol (`https:`), made on first use; undefined when none serves it. */
  forProtocol(protocol: string): Transport | undefined {
    if (this.#byProtocol.has(protocol)) return this.#byProtocol.get(protocol);
    const m = this.registry.forScheme(protocol);
    let t: Transport | undefined;
    if (m !== undefined) {
      t = this.#live.get(m);
      if (t === undefined) {
        t = m.create(this.ctx);
        this.#live.set(m, t);
      }
    }
    this.#byProtocol.set(protocol, t);
    return t;
  }

  /** Sends through the transport of the protocol; a protocol none serves is refused unsent. */
  send(protocol: string, attempt: TransportAttempt): Promise<SendOutcome> {
    const t = this.forProtocol(protocol);
    if (t !== undefined) return t.send(attempt);
    return Promise.resolve({
      kind: 'refused',
      text: `not sent: no transport serves ${protocol} Callbacks here`,
      latencyMs: 0,
    });
  }

  /** Ends every attempt in flight on every transport (they answer `aborted`). */
  abortAll(): void {
    for (const t of this.#live.values()) t.abortAll();
  }

  /** Closes every transport's connections. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#live.values()].map((t) => t.close()));
  }
}
