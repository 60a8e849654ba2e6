import { HookdError } from '../errors/index.js';

/**
 * The 409 of a `Name` another of the owner's hooks already has, from the store's unique index
 * (two creates racing past HookService's check) as from the check itself.
 */
export function nameConflict(name: string, holder?: string): HookdError {
  const by = holder === undefined ? 'another of your hooks' : `hook ${holder}`;
  return new HookdError(
    'CONFLICT',
    `Name "${name}" is already used by ${by}: a Name is unique among a user's hooks; choose another, or replace that hook (hookctl replace ${holder ?? name} -f FILE)`,
    { errors: [{ field: 'Name', message: `"${name}" is already used by ${by}` }] },
  );
}

/** Whether a driver error is a unique-index violation (SQLite or PostgreSQL). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}
