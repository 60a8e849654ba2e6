import type { Logger } from 'pino';

/**
 * How long a repeat of the stop signal counts as the same request (docs/DECISIONS.md "Signal
 * window"). Ctrl-C under `npm start` reaches hookd twice within milliseconds: once from the
 * terminal (the whole foreground group) and once forwarded by npm.
 */
export const SAME_SIGNAL_WINDOW_MS = 1000;

export interface StopOnSignals {
  log: Logger;
  drainMs: number;
  /** The drain: resolves once in-flight work is done and everything is closed. */
  close(): Promise<void>;
  /** Ends the process now (a second, deliberate signal); process.exit in the daemon. */
  exitNow(code: number): void;
  windowMs?: number;
}

/**
 * SIGTERM and SIGINT drain and stop. A repeat of the same signal within the window is the same
 * request and is only noted at debug level; another signal, or the same one later, exits at once.
 */
export function stopOnSignals(o: StopOnSignals): void {
  const windowMs = o.windowMs ?? SAME_SIGNAL_WINDOW_MS;
  let first: { signal: string; at: number } | undefined;
  const stop = (signal: string) => {
    if (first !== undefined) {
      if (signal === first.signal && performance.now() - first.at < windowMs) {
        // Debug, not info: one Ctrl-C under npm start arrives twice, and the user pressed it once.
        o.log.debug({ signal }, 'the same signal again: already draining');
        return;
      }
      o.log.warn({ signal }, 'second signal: exiting now');
      o.exitNow(1);
      return;
    }
    first = { signal, at: performance.now() };
    o.log.info({ signal, drainMs: o.drainMs }, 'stopping: finishing in-flight requests');
    const closing = o.close();
    // The window runs from the end of the drain's synchronous start: a repeat that arrived while
    // it ran (on a busy machine, longer than the window) is handled only now, and is the same.
    first.at = performance.now();
    closing.then(
      () => {
        o.log.info('stopped');
        o.log.flush();
        process.exitCode = 0;
      },
      (err: unknown) => {
        o.log.error({ err }, 'error while stopping');
        process.exitCode = 1;
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
