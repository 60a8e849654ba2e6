import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `check` until it returns something other than undefined/false (then returns it), or fails
 * after `timeoutMs` naming `what`. The one polling helper of the tests (issue 27).
 */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 15_000,
  everyMs = 20,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > until) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}
