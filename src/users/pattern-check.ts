import { HookdError } from '../errors/index.js';
import { compilePattern } from '../hook/index.js';
import type { OwnerScopes } from './owner-scopes.js';
import { patternAllowed, SCOPE_RULE } from './scopes.js';

/**
 * Create and replace: a hook's PathPattern must lie inside one of its owner's path scopes, unless
 * the owner has `own` (such a hook then fires for the owner's own requests, and for requests in
 * its path scopes). Refused with 400 naming `PathPattern`, the rule and the owner's scopes.
 */
export function pathPatternCheck(scopes: OwnerScopes): (owner: string, pathPattern: string) => Promise<void> {
  return async (owner, pathPattern) => {
    const compiled = compilePattern(pathPattern);
    if (!compiled.ok) return; // validation has refused it already
    const s = await scopes.scopesOf(owner);
    if (patternAllowed(s, compiled.pattern)) return;
    const listed = s.entries.length === 0 ? 'none' : s.entries.join(', ');
    const message = `"${pathPattern.slice(0, 200)}" is outside the scopes of user "${owner}" (${listed}): ${SCOPE_RULE}; an admin grants more with: hookctl users grant ${owner} PATH`;
    throw new HookdError('VALIDATION_FAILED', `PathPattern: ${message}`, {
      errors: [{ field: 'PathPattern', message }],
    });
  };
}
