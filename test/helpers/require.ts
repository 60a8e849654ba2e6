import type { TestContext } from 'node:test';

/**
 * The skip policy of the suite. A test that needs something the machine may lack (a browser, a
 * proxy, a shell, root, PostgreSQL) skips with a reason on a developer machine; with
 * HOOKD_REQUIRE_ALL=1 (CI) every such skip is a failure instead, so a green run means every test
 * ran. HOOKD_REQUIRE_POSTGRES=1 makes only the PostgreSQL skips failures.
 */
export type Need = 'postgres' | 'tool';

export function required(need: Need = 'tool'): boolean {
  if (process.env.HOOKD_REQUIRE_ALL === '1') return true;
  return need === 'postgres' && process.env.HOOKD_REQUIRE_POSTGRES === '1';
}

function flagName(need: Need): string {
  return process.env.HOOKD_REQUIRE_ALL === '1' || need === 'tool'
    ? 'HOOKD_REQUIRE_ALL=1'
    : 'HOOKD_REQUIRE_POSTGRES=1';
}

/** The error a required skip becomes, naming the reason and the flag that forbids skipping. */
export function requiredError(reason: string, need: Need = 'tool'): Error {
  return new Error(`${reason} (${flagName(need)}: this test must run here, not skip)`);
}

/**
 * For `describe(..., { skip })` and `it(..., { skip })`: undefined when nothing is missing; the
 * reason (logged) when something is and skipping is allowed; throws when it is not.
 */
export function skipReason(reason: string | false | undefined, need: Need = 'tool'): string | undefined {
  if (!reason) return undefined;
  if (required(need)) throw requiredError(reason, need);
  console.log(`# SKIPPED: ${reason}`);
  return reason;
}

/**
 * Inside a test: skips it with `reason`, or fails it when skipping is not allowed. Always ends
 * the test's own code, so `return requireOrSkip(t, why)`.
 */
export function requireOrSkip(t: Pick<TestContext, 'skip'>, reason: string, need: Need = 'tool'): void {
  if (required(need)) throw requiredError(reason, need);
  t.skip(reason);
}
