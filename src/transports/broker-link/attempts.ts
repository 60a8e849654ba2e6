/**
 * The attempt's time limit and shutdown for every broker transport: a send answers within
 * `timeoutMs` whatever the broker does, `abortAll` answers every send in flight at once, and a
 * fault thrown anywhere becomes an outcome, so `send` never rejects.
 */
import type { SendOutcome } from '../transport.js';
import type { Verdict } from './failure.js';

export class Attempts {
  readonly #inFlight = new Set<(v: Verdict) => void>();

  constructor(private readonly timeoutMs: number) {}

  /**
   * Runs `work` under the time limit. `late` says what was waited for when the limit passes
   * ("no acknowledgement from 127.0.0.1:1883 within 10000 ms"). `work` asks `live()` before
   * it puts anything on the wire: an attempt already answered must not be sent late.
   */
  run(late: (ms: number) => string, work: (live: () => boolean) => Promise<Verdict>): Promise<SendOutcome> {
    const started = performance.now();
    return new Promise<SendOutcome>((resolve) => {
      let done = false;
      const settle = (v: Verdict): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.#inFlight.delete(settle);
        resolve({ ...v, latencyMs: Math.round((performance.now() - started) * 100) / 100 });
      };
      const timer = setTimeout(
        () => settle({ kind: 'retry', text: late(this.timeoutMs), timedOut: true }),
        this.timeoutMs,
      );
      this.#inFlight.add(settle);
      work(() => !done).then(settle, (err: unknown) =>
        settle({ kind: 'retry', text: `not sent: ${err instanceof Error ? err.message : String(err)}` }),
      );
    });
  }

  /** Shutdown: every send in flight answers `aborted` (its outcome is unknown; it stays pending). */
  abortAll(): void {
    for (const settle of [...this.#inFlight]) {
      settle({ kind: 'retry', text: 'aborted: hookd is shutting down', aborted: true });
    }
  }
}
