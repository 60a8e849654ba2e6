/**
 * A hook's ordering key for one delivery: `Ordering.Key` rendered with the template engine of
 * callbacks, from the delivery's stored trigger (its path gives `$1`…`$n` again through the
 * hook's PathPattern). Derived, not stored: the same function serves a fresh firing, a restart
 * and a delivery claimed from another instance, and no migration is needed. `$TIMESTAMP` and
 * `$REQUEST_URI` are not part of a key (they would make every key different): they render empty
 * and as the path.
 */

import { MatchIndex } from '../engine/index.js';
import type { Hook } from '../hook/index.js';
import { type CompiledTemplate, compilePattern, compileTemplate } from '../hook/index.js';

/** What of a delivery the key is made from (its stored trigger). */
export interface KeyTrigger {
  method: string;
  path: string;
  statusCode?: number;
  user?: string;
}

interface Compiled {
  index: MatchIndex<true>;
  template: CompiledTemplate;
}

// One per stored version of a hook (a replace makes a new object).
const compiled = new WeakMap<Hook, Compiled | null>();

function compiledOf(hook: Hook): Compiled | null {
  let c = compiled.get(hook);
  if (c === undefined) {
    const p = compilePattern(hook.PathPattern);
    if (!p.ok || hook.Ordering === undefined) c = null;
    else {
      const index = new MatchIndex<true>();
      index.set('k', p.pattern, true);
      c = { index, template: compileTemplate(hook.Ordering.Key, 'text/plain', { maxBytes: 1024 }) };
    }
    compiled.set(hook, c);
  }
  return c;
}

/** The key, or undefined when the hook is not ordered (or its key cannot be rendered). */
export function orderingKeyOf(hook: Hook | undefined, trigger: KeyTrigger): string | undefined {
  if (hook?.Ordering === undefined) return undefined;
  const c = compiledOf(hook);
  if (c === null) return undefined;
  const captures = c.index.match(trigger.path)[0]?.captures ?? [];
  try {
    return c.template.render({
      requestPath: trigger.path,
      requestUri: trigger.path,
      requestMethod: trigger.method,
      requestUser: trigger.user,
      statusCode: trigger.statusCode,
      hookId: hook.Id,
      hookType: hook.Type,
      timestamp: '',
      captures,
    });
  } catch {
    // Over the size limit: one key for all of them keeps the order rather than losing it.
    return '';
  }
}
