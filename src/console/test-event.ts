import { TEST_HEADER } from '../delivery/index.js';
import type { FiredEvent, FiredEventSink, MatchEngine } from '../engine/index.js';
import { HookdError } from '../errors/index.js';
import { compilePattern, type Hook, isoTimestamp } from '../hook/index.js';

/** A request path the pattern matches: its literals, and `test` for every `*` and `(*)`. */
export function samplePath(pattern: string): string {
  const p = compilePattern(pattern);
  if (!p.ok) return '/';
  const segs = p.pattern.segments.map((s) => (s.kind === 'literal' ? encodeURIComponent(s.value) : 'test'));
  return `/${segs.join('/')}`;
}

/** A response status the hook fires for: its first listed one, else 200, else a 2xx not refused. */
function sampleStatus(hook: Hook): number | undefined {
  if (hook.Type === 0) return undefined;
  if (hook.StatusCodeWhiteList.length > 0) return hook.StatusCodeWhiteList[0];
  for (const s of [200, 201, 204, 202, 500]) if (!hook.StatusCodeBlackList.includes(s)) return s;
  return undefined;
}

export interface TestEventDeps {
  engine: Pick<MatchEngine, 'preview'>;
  /** The pipeline's intake, as the proxy's firing uses it. */
  pipeline: FiredEventSink;
}

/**
 * Sends a synthetic trigger for one hook through the real pipeline: the engine renders the
 * callback exactly as for a request to a path the pattern matches (made by the hook's owner),
 * and the pipeline records, signs, sends and retries it like any other delivery.
 */
export async function sendTestEvent(
  deps: TestEventDeps,
  hook: Hook,
  baseUri: string,
): Promise<{ method: string; path: string; statusCode?: number }> {
  if (hook.State !== 'active')
    throw new HookdError('CONFLICT', 'the hook is disabled: enable it (save it again) before testing it');
  const path = samplePath(hook.PathPattern);
  const method = hook.Methods.find((m) => m !== '*') ?? 'POST';
  const statusCode = sampleStatus(hook);
  const trigger = {
    method,
    path,
    uri: () => `${baseUri}${path}`,
    user: hook.Owner,
    ...(statusCode !== undefined && { statusCode }),
  };
  const preview = (await deps.engine.preview(hook.Owner, trigger)).find((p) => p.hook.Id === hook.Id);
  if (!preview)
    throw new HookdError(
      'CONFLICT',
      `the hook does not fire for ${method} ${path}${statusCode !== undefined ? ` [${statusCode}]` : ''}: its owner's scopes leave that path out`,
    );
  const request = { ...preview.request, headers: { ...preview.request.headers, [TEST_HEADER]: 'true' } };
  if (hook.CallbackContent === undefined && request.body !== undefined) {
    // The default event document says so too.
    try {
      request.body = JSON.stringify({ ...(JSON.parse(request.body) as object), test: true });
    } catch {
      // Always JSON when hookd wrote it; left as it is otherwise.
    }
  }
  const event: FiredEvent = {
    hookId: hook.Id,
    owner: hook.Owner,
    hookType: hook.Type,
    persist: hook.Persist,
    firedAt: isoTimestamp(),
    trigger: { method, path, user: hook.Owner, ...(statusCode !== undefined && { statusCode }) },
    request,
  };
  deps.pipeline.accept([event]);
  return { method, path, ...(statusCode !== undefined && { statusCode }) };
}
