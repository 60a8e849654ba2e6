/**
 * A transport whose implementation, and the client library under it, is imported on its first
 * send. A broker client costs tens of milliseconds to import; a daemon whose hooks use no broker
 * never pays for it, and one that does pays once, when the first callback leaves.
 */
import type { SendOutcome, Transport, TransportAttempt, TransportContext } from './transport.js';

/** Imports the implementation; resolves to the function that makes it. */
export type TransportLoader = () => Promise<(ctx: TransportContext) => Transport>;

class OnFirstSend implements Transport {
  #made: Transport | undefined;
  #making: Promise<Transport> | undefined;
  #closed = false;
  // Bumped by abortAll: a send that waited for the import across it ends as aborted.
  #aborts = 0;

  constructor(
    private readonly ctx: TransportContext,
    private readonly load: TransportLoader,
    private readonly label: string,
  ) {}

  #transport(): Promise<Transport> {
    this.#making ??= this.load().then((make) => {
      this.#made = make(this.ctx);
      return this.#made;
    });
    return this.#making;
  }

  async send(attempt: TransportAttempt): Promise<SendOutcome> {
    if (this.#made !== undefined) return this.#made.send(attempt);
    const t0 = performance.now();
    const aborts = this.#aborts;
    let t: Transport;
    try {
      t = await this.#transport();
    } catch (err) {
      // A failed import stays failed for this attempt only: the next one tries again.
      this.#making = undefined;
      const why = err instanceof Error ? err.message : String(err);
      return { kind: 'retry', text: `the ${this.label} client could not be loaded: ${why}`, latencyMs: 0 };
    }
    if (this.#closed || aborts !== this.#aborts || attempt.signal?.aborted) {
      const text = this.#closed ? 'the transport is closed' : 'the attempt was aborted';
      return { kind: 'retry', aborted: true, text, latencyMs: performance.now() - t0 };
    }
    return t.send(attempt);
  }

  abortAll(): void {
    this.#aborts++;
    this.#made?.abortAll();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const t =
      this.#made ?? (this.#making === undefined ? undefined : await this.#making.catch(() => undefined));
    await t?.close();
  }
}

/** A transport made by `load`'s implementation, imported on the first send. */
export function onFirstSend(ctx: TransportContext, label: string, load: TransportLoader): Transport {
  return new OnFirstSend(ctx, load, label);
}
