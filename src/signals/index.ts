// The public surface of signals/: how the daemon stops on SIGTERM and SIGINT, a repeat of the
// same signal within a short window being the same request (docs/DECISIONS.md "Signal window").
export { SAME_SIGNAL_WINDOW_MS, type StopOnSignals, stopOnSignals } from './stop-on-signals.js';
