/**
 * The attempt's time limit and shutdown for every broker transport: a send answers within
 * `timeoutMs` whatever the broker does, `abortAll` answers every send in flight at once, and a
 * fault thrown anywhere becomes an outcome, so `send` never rejects.
 */
import type { SendOutcome } from '../transport.js';
import type { Verdict } from './failure.js';

/** Shutdown ended the send: its outcome is unknown; it stays pending. */
const ABORTED: Verdict = { kind: 'retry', text: 'aborted: hookd is shutting down', aborted: true };

export class Attempts {
  readonly #inFlight = new Set<(v: Verdict) => void>();

  constructor(private readonly timeoutMs: number) {}

  /**
   * Runs `work` under the time limit. `late` says what was waited for when the limit passes
   * ("no acknowledgement from 127.0.0.1:1883 within 10000 ms"). `work` asks `live()` before
   * it puts anything on the wire: an attempt already answered must not be sent late.
   */
  run(
    late: (ms: number) => string,
    work: (live: () => boolean) => Promise<Verdict>,
    signal?: AbortSignal,
  ): Promise<SendOutcome> {
    const started = performance.now();
    return new Promise<SendOutcome>((resolve) => {
      let done = false;
      const onAbort = () => settle(ABORTED);
      const settle = (v: Verdict): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#inFlight.delete(settle);
        resolve({ ...v, latencyMs: Math.round((performance.now() - started) * 100) / 100 });
      };
      const timer = setTimeout(
        () => settle({ kind: 'retry', text: late(this.timeoutMs), timedOut: true }),
        this.timeoutMs,
      );
      this.#inFlight.add(settle);
      if (signal?.aborted) return settle(ABORTED);
      signal?.addEventListener('abort', onAbort, { once: true });
      work(() => !done).then(settle, (err: unknown) =>
        settle({ kind: 'retry', text: `not sent: ${err instanceof Error ? err.message : String(err)}` }),
      );
    });
  }

  /** Shutdown: every send in flight answers `aborted` (its outcome is unknown; it stays pending). */
  abortAll(): void {
    for (const settle of [...this.#inFlight]) settle(ABORTED);
  }
}
