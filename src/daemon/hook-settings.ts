/**
 * A hook's own delivery settings as the pipeline asks for them, from the hook the engine holds:
 * its retry schedule (made once per stored version) and its rate limit.
 */
import { type RetrySchedule, retrySchedule } from '../delivery/retry-policy.js';
import type { Hook, RateLimit } from '../hook/hook.js';

const schedules = new WeakMap<Hook, RetrySchedule>();

/** A hook's own `RetrySchedule` as the pipeline's schedule. */
export function hookSchedule(hook: Hook | undefined): RetrySchedule | undefined {
  if (hook?.RetrySchedule === undefined) return undefined;
  let s = schedules.get(hook);
  if (s === undefined) {
    s = retrySchedule({ delaysMs: hook.RetrySchedule.map((sec) => sec * 1000) });
    schedules.set(hook, s);
  }
  return s;
}

/** A hook's `RateLimit`, if it has one. */
export function hookRateLimit(hook: Hook | undefined): RateLimit | undefined {
  return hook?.RateLimit;
}
