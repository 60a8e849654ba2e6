/**
 * A redelivery of a delivery whose hook's Transform failed runs the hook's Transform again, as
 * the hook is now (fixed, one hopes), on the event the failed run was given. Its result becomes
 * the delivery's recorded request, merged as at firing: `headers` over the rendered ones, and
 * `payload` as the body when the callback has one.
 */
import type { Retransform } from '../delivery/index.js';
import type { MatchEngine } from '../engine/index.js';
import type { FilterInput } from '../filter/index.js';

export function retransformer(engine: MatchEngine): Retransform {
  return async (hookId, input, request) => {
    const hook = engine.get(hookId);
    if (hook === undefined) return { error: `hook ${hookId} no longer exists` };
    // The hook lost its Transform: the request as rendered is what it sends.
    if (hook.Transform === undefined) return { ...request, headers: { ...request.headers } };
    const out = await engine.code.transform(hook, JSON.parse(input) as FilterInput, {
      ...request,
      headers: { ...request.headers },
    });
    if ('error' in out) return { error: out.error };
    if (out.skip) return { error: 'Transform: skip: true, nothing to send' };
    const headers = { ...request.headers, ...out.headers };
    if (request.body === undefined) return { headers };
    return { headers, body: out.payload ?? request.body };
  };
}
